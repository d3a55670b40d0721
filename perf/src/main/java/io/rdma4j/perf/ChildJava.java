package io.rdma4j.perf;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The command line of a child JVM on this process's class path, with the flags every rdma4j JVM needs. */
public final class ChildJava {
    private ChildJava() {}

    /**
     * {@return {@code java} (this process's own launcher), native access, the Unsafe flag gRPC's protobuf needs, then
     * {@code jvmOptions}, the class path, {@code main} and {@code args}}
     */
    public static List<String> command(List<String> jvmOptions, Class<?> main, List<String> args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current()
                .info()
                .command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("--sun-misc-unsafe-memory-access=allow");
        cmd.addAll(jvmOptions);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(main.getName());
        cmd.addAll(args);
        return cmd;
    }
}
