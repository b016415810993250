package io.conveyor.testing;

import io.vertx.core.json.JsonObject;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * A raw TCP event-bus bridge client (a 4-byte length, then a JSON frame), as a program in any language would
 * speak it. Reads block for at most the timeout given.
 */
public final class BridgeClient implements AutoCloseable {
  private final Socket socket;
  private final DataInputStream in;
  private final DataOutputStream out;

  public BridgeClient(int port) throws IOException {
    this(new Socket("127.0.0.1", port));
  }

  /** A client on a socket of the caller's (a TLS one, say). */
  public BridgeClient(Socket socket) throws IOException {
    this.socket = socket;
    socket.setSoTimeout(10_000);
    in = new DataInputStream(socket.getInputStream());
    out = new DataOutputStream(socket.getOutputStream());
  }

  /** Sends a frame, with headers.apiKey when a key is given. */
  public void write(JsonObject frame, String key) throws IOException {
    if (key != null) {
      frame.put("headers", new JsonObject().put("apiKey", key));
    }
    byte[] bytes = frame.encode().getBytes(StandardCharsets.UTF_8);
    out.writeInt(bytes.length);
    out.write(bytes);
    out.flush();
  }

  public void register(String address, String key) throws IOException {
    write(new JsonObject().put("type", "register").put("address", address), key);
  }

  /** The next frame; SocketTimeoutException after 10 s of silence. */
  public JsonObject read() throws IOException {
    byte[] frame = new byte[in.readInt()];
    in.readFully(frame);
    return new JsonObject(new String(frame, StandardCharsets.UTF_8));
  }

  /** The next frame within the bound, or null. */
  public JsonObject poll(Duration bound) throws IOException {
    socket.setSoTimeout((int) Math.max(1, bound.toMillis()));
    try {
      return read();
    } catch (SocketTimeoutException e) {
      return null;
    } finally {
      socket.setSoTimeout(10_000);
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
