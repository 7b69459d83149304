package dev.weir.testservices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Starts real ZooKeeper servers (child JVMs): one for the class through {@link
 * ZooKeeperExtension}, more for the command line and stopping, and none for the port-taken case.
 * About 3 s on 2 cores.
 */
class ZooKeeperServerIT {

  @RegisterExtension static final ZooKeeperExtension ZK = new ZooKeeperExtension();

  @Test
  void aClientConnectsWritesAndReadsAZnode(ZooKeeperServer server) throws Exception {
    assertThat(server).isSameAs(ZK.server());
    assertThat(server.connectString()).startsWith("127.0.0.1:");
    assertThat(server.fourLetterWord("srvr")).contains("Zookeeper version: 3.8.4");
    CountDownLatch connected = new CountDownLatch(1);
    ZooKeeper client = new ZooKeeper(server.connectString(), 10_000, event -> {
      if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
        connected.countDown();
      }
    });
    try {
      assertThat(connected.await(30, TimeUnit.SECONDS)).isTrue();
      client.create("/weir-it", "hello".getBytes(StandardCharsets.UTF_8),
          ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
      assertThat(new String(client.getData("/weir-it", false, null), StandardCharsets.UTF_8))
          .isEqualTo("hello");
    } finally {
      client.close();
    }
    assertThat(ZooKeeperServer.attach(server.dir())).hasValueSatisfying(
        s -> assertThat(s.pid()).isEqualTo(server.pid()));
  }

  @Test
  void aTakenPortFailsNamingTheAddress() throws Exception {
    Path dir = Paths.get("target", "zookeeper-it", "taken-" + System.currentTimeMillis());
    try (ServerSocket taken = new ServerSocket()) {
      taken.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      int port = taken.getLocalPort();
      assertThatThrownBy(() -> ZooKeeperServer.start(ZooKeeperServer.Config.in(dir).withPort(port)))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("127.0.0.1:" + port);
    }
  }

  @Test
  void commandLine_startStatusStop() {
    Path dir = Paths.get("target", "zookeeper-it", "cli-" + System.currentTimeMillis()).toAbsolutePath();
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    java.io.PrintStream print = new java.io.PrintStream(out, true, StandardCharsets.UTF_8);
    String[] where = {"--port", "0", "--dir", dir.toString()};
    try {
      assertThat(ZooKeeperCli.run(cat("start", where), print, print)).as(out.toString()).isZero();
      assertThat(out.toString()).contains("ZooKeeper running at 127.0.0.1:");
      assertThat(ZooKeeperCli.run(cat("status", where), print, print)).isZero();
      assertThat(ZooKeeperCli.run(cat("stop", where), print, print)).isZero();
      assertThat(ZooKeeperCli.run(cat("status", where), print, print)).isEqualTo(1);
      assertThat(ZooKeeperCli.run(new String[] {"start", "--port", "x"}, print, print)).isEqualTo(2);
      assertThat(out.toString()).contains("--port: not a port number: x");
    } finally {
      ZooKeeperServer.attach(dir).ifPresent(ZooKeeperServer::close);
    }
  }

  private static String[] cat(String command, String[] rest) {
    String[] all = new String[rest.length + 1];
    all[0] = command;
    System.arraycopy(rest, 0, all, 1, rest.length);
    return all;
  }

  @Test
  void closeStopsTheServer() {
    Path dir = Paths.get("target", "zookeeper-it", "stop-" + System.currentTimeMillis());
    ZooKeeperServer server = ZooKeeperServer.start(ZooKeeperServer.Config.in(dir));
    assertThat(server.isRunning()).isTrue();
    server.close();
    assertThat(server.isRunning()).isFalse();
    assertThat(ZooKeeperServer.attach(dir)).isEmpty();
  }
}
