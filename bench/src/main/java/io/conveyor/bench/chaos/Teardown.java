package io.conveyor.bench.chaos;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Everything the suite started, undone in reverse order: at the end of a run, and from a shutdown hook when
 * the suite is interrupted or fails, so no node, Redis or PostgreSQL outlives it.
 */
final class Teardown {
  private static final Deque<Runnable> ACTIONS = new ArrayDeque<>();

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(Teardown::all, "chaos-teardown"));
  }

  private Teardown() {
  }

  /** Registers an undo action; answers a handle that runs it once (and forgets it). */
  static synchronized Runnable add(Runnable action) {
    Runnable once = new Runnable() {
      private boolean done;

      @Override
      public void run() {
        synchronized (Teardown.class) {
          if (done) {
            return;
          }
          done = true;
          ACTIONS.remove(this);
        }
        try {
          action.run();
        } catch (RuntimeException e) {
          System.err.println("chaos: teardown: " + e);
        }
      }
    };
    ACTIONS.push(once);
    return once;
  }

  /** A process is ended by its pid with SIGKILL (SIGCONT first, in case it is stopped). */
  static Runnable process(Process p) {
    return add(() -> {
      p.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
      Procs.signal(p.pid(), "CONT");
      p.destroyForcibly();
    });
  }

  static void all() {
    while (true) {
      Runnable next;
      synchronized (Teardown.class) {
        next = ACTIONS.peek();
      }
      if (next == null) {
        return;
      }
      next.run();
    }
  }
}
