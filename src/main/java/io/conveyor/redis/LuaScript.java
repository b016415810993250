package io.conveyor.redis;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** One Lua file from resources/lua, with the SHA-1 Redis will know it by. */
public record LuaScript(String name, String source, String sha) {

  public static LuaScript load(String name) {
    String path = "/lua/" + name + ".lua";
    try (InputStream in = LuaScript.class.getResourceAsStream(path)) {
      if (in == null) {
        throw new IllegalStateException("missing script " + path);
      }
      String source = includes(new String(in.readAllBytes(), StandardCharsets.UTF_8));
      return new LuaScript(name, source, sha1(source));
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + path, e);
    }
  }

  /** The same script with a first line of flags (see ScriptFlags); its SHA is that of what is sent. */
  LuaScript withShebang(String shebang) {
    String flagged = shebang + "\n" + source;
    return new LuaScript(name, flagged, sha1(flagged));
  }

  /** A line "-- #include NAME" is replaced by lua/lib/NAME.lua: helpers several scripts share. */
  static String includes(String source) {
    StringBuilder out = new StringBuilder(source.length());
    for (String line : source.split("\n", -1)) {
      if (line.startsWith("-- #include ")) {
        String lib = "/lua/lib/" + line.substring("-- #include ".length()).trim() + ".lua";
        try (InputStream in = LuaScript.class.getResourceAsStream(lib)) {
          if (in == null) {
            throw new IllegalStateException("missing script library " + lib);
          }
          out.append(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
          throw new IllegalStateException("cannot read " + lib, e);
        }
      } else {
        out.append(line).append('\n');
      }
    }
    out.setLength(out.length() - 1);
    return out.toString();
  }

  static String sha1(String text) {
    try {
      MessageDigest md = MessageDigest.getInstance("SHA-1");
      return HexFormat.of().formatHex(md.digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
