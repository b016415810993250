package io.conveyor.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A lock the test JVMs of one build (surefire's and failsafe's forks) share: a lock on a file under target/. For
 * what is one per machine or per build, not per test: SCRIPT FLUSH empties the script cache of the whole server (a
 * test that flushes and then checks that its node loaded the scripts again holds "script-flush" from the flush to
 * the check), and the node processes' class-data archive is made once for all (NodeJvm holds "node-classes").
 */
public final class CrossJvmLock implements AutoCloseable {
  private final FileChannel channel;
  private final FileLock lock;

  private CrossJvmLock(String name) {
    Path file = Path.of("target", name + ".lock");
    try {
      Files.createDirectories(file.getParent());
      channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      lock = channel.lock();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The lock of that name, once no other JVM of the build holds it. */
  public static CrossJvmLock hold(String name) {
    return new CrossJvmLock(name);
  }

  @Override
  public void close() {
    try {
      lock.release();
      channel.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
