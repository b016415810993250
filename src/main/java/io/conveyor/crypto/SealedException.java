package io.conveyor.crypto;

/**
 * A sealed value that cannot be opened: its data key is gone (shredded) or unknown, or the value is not the one
 * sealed there (altered, or copied from another owner, transaction or field). Reads answer it as sealed.
 */
public final class SealedException extends RuntimeException {
  public SealedException(String message) {
    super(message, null, false, false);
  }
}
