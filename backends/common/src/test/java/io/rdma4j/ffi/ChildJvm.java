package io.rdma4j.ffi;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Starts another JVM on this test's classpath, with native access enabled, for tests that cross process boundaries. */
public final class ChildJvm {
    private ChildJvm() {}

    public static ProcessBuilder builder(Class<?> main, String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("--sun-misc-unsafe-memory-access=allow"); // protobuf-java (gRPC) still uses sun.misc.Unsafe
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(main.getName());
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("IPATH_NO_BACKTRACE", "1");
        return pb;
    }

    public static Process start(Class<?> main, String... args) throws IOException {
        return builder(main, args)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
    }
}
