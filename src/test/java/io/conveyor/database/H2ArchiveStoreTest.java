package io.conveyor.database;

import io.vertx.core.Vertx;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.ResultSet;

/** The archive contract on the embedded H2 file. */
class H2ArchiveStoreTest extends ArchiveStoreContract {
  private final Path file;

  H2ArchiveStoreTest() throws Exception {
    file = Files.createTempDirectory("archive").resolve("archive");
  }

  @Override
  protected ArchiveStore newStore(Vertx vertx) {
    return new H2ArchiveStore(vertx, file, "conveyor_transactions");
  }

  @Override
  protected ArchiveStore sameStore(Vertx vertx) {
    return newStore(vertx);
  }

  @Override
  protected long rows(String txId) {
    try (var c = DriverManager.getConnection("jdbc:h2:file:" + file.toAbsolutePath() + ";AUTO_SERVER=TRUE", "sa", "");
         var p = c.prepareStatement("SELECT count(*) FROM conveyor_transactions WHERE tx_id = ?")) {
      p.setString(1, txId);
      try (ResultSet rs = p.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
