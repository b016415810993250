package io.conveyor.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * SCRIPT FLUSH empties the script cache of the whole server, which the test JVMs (surefire's forks) share. A test
 * that flushes and then checks that its node loaded the scripts again holds this lock from the flush to the check,
 * so another JVM's flush cannot fall in between. A lock on a file under target/, taken by every JVM of the build.
 */
public final class ScriptFlushLock implements AutoCloseable {
  private static final Path FILE = Path.of("target", "script-flush.lock");
  private final FileChannel channel;
  private final FileLock lock;

  private ScriptFlushLock() {
    try {
      Files.createDirectories(FILE.getParent());
      channel = FileChannel.open(FILE, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      lock = channel.lock();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Waits until no other JVM of the build holds it. */
  public static ScriptFlushLock hold() {
    return new ScriptFlushLock();
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
