package io.rdma4j.perf;

import io.rdma4j.engine.Access;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.rendezvous.DirectoryServer;
import io.rdma4j.rendezvous.Security;
import java.lang.foreign.Arena;
import java.time.Duration;

/**
 * The processes {@code bench rendezvous-failover} kills with SIGKILL, started with this JVM's java and class path:
 * {@code directory ETCD_URL} serves a directory on a free loopback port kept in etcd; {@code engine NAME DIRECTORIES
 * PROVIDER LEASE_MS} runs a transfer engine that publishes a 1 MiB buffer {@code sink}. Each prints one line saying
 * where it is, then runs until killed.
 */
final class FailoverChild {
    private FailoverChild() {}

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "directory" -> {
                DirectoryServer d = DirectoryServer.builder()
                        .bindAddress("127.0.0.1")
                        .port(0)
                        .store(args[1])
                        .start();
                System.out.println("directory " + d.target());
                System.out.flush();
                d.awaitTermination();
            }
            case "engine" -> {
                TransferEngine.Builder b = TransferEngine.builder()
                        .name(args[1])
                        .directory(args[2], Security.none())
                        .backend("libfabric")
                        .provider(args[3])
                        .lanesPerNic(1)
                        .lease(Duration.ofMillis(Long.parseLong(args[4])));
                TransferEngine e = (args[3].startsWith("tcp") ? b.nicFilter("lo") : b).build();
                e.publish("sink", e.register(Arena.ofShared().allocate(1 << 20, 4096)), Access.anyPeer());
                System.out.println("engine " + e.name());
                System.out.flush();
                Thread.sleep(Long.MAX_VALUE);
            }
            default -> throw new IllegalArgumentException("unknown child " + args[0]);
        }
    }
}
