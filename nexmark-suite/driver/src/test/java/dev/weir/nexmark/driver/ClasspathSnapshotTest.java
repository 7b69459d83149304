// Role: unit test of ClasspathSnapshot: repository jars and SNAPSHOT jars are copied, release jars
// elsewhere are kept as they are. Threading: single-threaded JUnit test.
package dev.weir.nexmark.driver;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClasspathSnapshotTest {
  @TempDir Path tmp;

  @Test
  void copiesMutableEntriesOnly() throws Exception {
    Path home = Files.createDirectories(tmp.resolve("repo"));
    Path harness = Files.writeString(Files.createDirectories(home.resolve("harness/target")).resolve("h.jar"), "v1");
    Path classes = Files.createDirectories(home.resolve("runner/target/classes/dev"));
    Files.writeString(classes.resolve("A.class"), "a");
    Path m2 = Files.createDirectories(tmp.resolve("m2"));
    Path release = Files.writeString(m2.resolve("beam-2.70.0.jar"), "r");
    Path snapshotJar = Files.writeString(m2.resolve("x-0.1-SNAPSHOT.jar"), "s");

    ClasspathSnapshot snap = new ClasspathSnapshot(home, tmp.resolve("frozen"));
    String cp = String.join(File.pathSeparator, harness.toString(), home.resolve("runner/target/classes").toString(),
        release.toString(), snapshotJar.toString());
    String[] frozen = snap.freeze(cp).split(File.pathSeparator);

    assertThat(frozen).hasSize(4);
    assertThat(frozen[0]).startsWith(tmp.resolve("frozen").toString());
    assertThat(Path.of(frozen[1]).resolve("dev/A.class")).hasContent("a");
    assertThat(frozen[2]).isEqualTo(release.toString());
    assertThat(frozen[3]).startsWith(tmp.resolve("frozen").toString());
    Files.writeString(harness, "v2"); // a rebuild after the freeze does not reach the copy
    assertThat(Path.of(frozen[0])).hasContent("v1");
    assertThat(snap.freeze(harness.toString())).isEqualTo(frozen[0]); // copied once
  }
}
