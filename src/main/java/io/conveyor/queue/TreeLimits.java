package io.conveyor.queue;

import io.conveyor.redis.Code;

/**
 * How a child or branch refused by the tree limits (limits.maxDepth, limits.maxDescendants; hop.lua and
 * fork.lua) fails the step that tried: a named code and a note that says which limit, its value, and what
 * to do. Such a failure is never retried: the tree would only meet the same wall again.
 */
final class TreeLimits {
  private TreeLimits() {
  }

  /** The failure's code: depth-exceeded or descendants-exceeded. */
  static String code(Code code) {
    return code == Code.DEPTH_EXCEEDED ? "depth-exceeded" : "descendants-exceeded";
  }

  /** The failure's note for step i (0-based), with what the script answered: the depth or count, the limit. */
  static String note(Code code, int i, String reached, String limit) {
    return "step " + (i + 1) + ": " + code(code) + ": " + (code == Code.DEPTH_EXCEEDED
        ? "a child would nest at depth " + reached + " below its root, over limits.maxDepth " + limit
        + "; look for child pipelines that start each other (a cycle), or raise limits.maxDepth"
        : "its root's tree would hold " + reached + " transactions, over limits.maxDescendants " + limit
        + "; start smaller trees, or raise limits.maxDescendants");
  }
}
