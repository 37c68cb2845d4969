// Drives the PostgreSQL endpoint with the PostgreSQL JDBC driver and the default URL (extended protocol,
// server-side prepared statements and binary transfer after prepareThreshold), printing what it saw as
// one line per fact. pg-jdbc.test.ts compiles this with javac at test time and asserts on the output.
// Arguments: JDBC URL, user, password, a component name only another organisation has.
import java.sql.*;
import java.util.*;

public class PgClientCheck {
  public static void main(String[] args) throws Exception {
    Properties p = new Properties();
    p.setProperty("user", args[1]);
    p.setProperty("password", args[2]);
    try (Connection c = DriverManager.getConnection(args[0], p)) {
      DatabaseMetaData md = c.getMetaData();
      System.out.println("product\t" + md.getDatabaseProductName() + "\t" + md.getDatabaseProductVersion());
      try (ResultSet rs = md.getTables(null, null, "%", new String[] {"TABLE", "VIEW", "SYSTEM TABLE"})) {
        while (rs.next()) System.out.println("table\t" + rs.getString("TABLE_SCHEM") + "\t" + rs.getString("TABLE_NAME") + "\t" + rs.getString("TABLE_TYPE"));
      }
      try (ResultSet rs = md.getColumns(null, "public", "readings", "%")) {
        while (rs.next()) System.out.println("column\t" + rs.getString("COLUMN_NAME") + "\t" + rs.getString("TYPE_NAME") + "\t" + rs.getInt("DATA_TYPE") + "\t" + rs.getInt("ORDINAL_POSITION"));
      }
      try (ResultSet rs = md.getSchemas()) {
        while (rs.next()) System.out.println("schema\t" + rs.getString("TABLE_SCHEM"));
      }
      try (ResultSet rs = md.getPrimaryKeys(null, "public", "readings")) {
        int n = 0;
        while (rs.next()) n++;
        System.out.println("primary_keys\t" + n);
      }
      try (ResultSet rs = md.getTypeInfo()) {
        List<String> names = new ArrayList<>();
        while (rs.next()) names.add(rs.getString("TYPE_NAME"));
        System.out.println("type_info\t" + names.contains("int8") + "\t" + names.contains("jsonb") + "\t" + names.contains("timestamptz"));
      }
      // More executions than prepareThreshold (5): the driver switches to a named server-side statement and binary results.
      for (int i = 0; i < 8; i++) {
        try (PreparedStatement ps = c.prepareStatement(
            "SELECT time_received, component_name, count(*) OVER () AS n FROM readings WHERE component_name = ? AND time_received >= ? ORDER BY time_received LIMIT ?")) {
          ps.setString(1, "thermo");
          ps.setTimestamp(2, Timestamp.from(java.time.Instant.parse("2020-01-01T00:00:00Z")));
          ps.setInt(3, 10);
          try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              Object t = rs.getObject(1);
              System.out.println("row\t" + i + "\t" + t.getClass().getName() + "\t" + rs.getTimestamp(1).toInstant() + "\t" + rs.getString(2) + "\t" + rs.getLong(3) + "\t" + rs.getMetaData().getColumnLabel(3));
            }
          }
        }
      }
      try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM readings WHERE component_name = ?")) {
        ps.setString(1, args[3]);
        try (ResultSet rs = ps.executeQuery()) { rs.next(); System.out.println("other_org_rows\t" + rs.getLong(1)); }
      }
      try (Statement s = c.createStatement()) {
        s.executeQuery("SELECT * FROM pg_catalog.pg_shadow");
        System.out.println("catalog_refused\tno");
      } catch (SQLException e) {
        System.out.println("catalog_refused\t" + e.getSQLState() + "\t" + e.getMessage().replace('\n', ' '));
      }
      c.setAutoCommit(false);
      try (Statement s = c.createStatement()) {
        s.setFetchSize(3);
        try (ResultSet rs = s.executeQuery("SELECT x FROM range(20) r(x)")) {
          int n = 0;
          while (rs.next()) n++;
          System.out.println("fetch_size_rows\t" + n);
        }
      }
      c.commit();
    }
  }
}
