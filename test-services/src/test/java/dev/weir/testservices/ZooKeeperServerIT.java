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
 * ZooKeeperExtension}, one more for the port-taken case. About 5 s on 2 cores.
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
  void closeStopsTheServer() {
    Path dir = Paths.get("target", "zookeeper-it", "stop-" + System.currentTimeMillis());
    ZooKeeperServer server = ZooKeeperServer.start(ZooKeeperServer.Config.in(dir));
    assertThat(server.isRunning()).isTrue();
    server.close();
    assertThat(server.isRunning()).isFalse();
    assertThat(ZooKeeperServer.attach(dir)).isEmpty();
  }
}
