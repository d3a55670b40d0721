package io.rdma4j.ffi;

import java.nio.file.Files;
import java.nio.file.Path;

/** Where tests find the project root and the read-only fixtures in {@code ../shared} beside it. */
public final class TestPaths {
    private TestPaths() {}

    /** The project root (set by Surefire as {@code rdma4j.project.root}; else found by walking up to the root pom). */
    public static Path projectRoot() {
        String p = System.getProperty("rdma4j.project.root");
        if (p != null && Files.isDirectory(Path.of(p, "backends"))) {
            return Path.of(p).toAbsolutePath().normalize();
        }
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !(Files.exists(dir.resolve("pom.xml")) && Files.isDirectory(dir.resolve("backends")))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IllegalStateException(
                    "cannot find the rdma4j project root from " + Path.of("").toAbsolutePath());
        }
        return dir;
    }

    /**
     * The real-machine captures: the system property {@code rdma4j.shared}, else {@code RDMA4J_SHARED}, else
     * {@code ../shared} next to the project root. Only tests marked {@link Extended} may read them.
     */
    public static Path shared() {
        String prop = System.getProperty("rdma4j.shared");
        if (prop != null && !prop.isBlank()) {
            return Path.of(prop);
        }
        String env = System.getenv("RDMA4J_SHARED");
        return env != null && !env.isBlank()
                ? Path.of(env)
                : projectRoot().resolve("../shared").normalize();
    }
}
