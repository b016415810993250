package io.conveyor.config;

/** What this build is: the version in the jar's manifest, or "dev" when run from classes. */
public final class BuildInfo {
  private BuildInfo() {
  }

  public static String version() {
    String v = BuildInfo.class.getPackage().getImplementationVersion();
    return v == null ? "dev" : v;
  }
}
