package io.rdma4j.perf;

import io.rdma4j.engine.Access;
import io.rdma4j.engine.Notification;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.rendezvous.Security;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The target side of {@code bench engine-write}, in its own process as a remote peer is: args are the directory, its
 * engine name, the provider, lanes per NIC, chunk size, queue depth and buffer size. It publishes {@code sink}, says
 * {@code READY}, and for each {@code AWAIT tag} on stdin says {@code TAG tag} once that notification has landed (or
 * {@code MISSING tag} after 30 s), so the initiator's clock stops at bytes visible here.
 */
public final class EngineWriteTarget {
    private EngineWriteTarget() {}

    public static void main(String[] args) throws Exception {
        String directory = args[0];
        String name = args[1];
        String provider = args[2];
        int lanes = Integer.parseInt(args[3]);
        long chunk = Long.parseLong(args[4]);
        int depth = Integer.parseInt(args[5]);
        long bufferSize = Long.parseLong(args[6]);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (Arena arena = Arena.ofShared();
                TransferEngine engine = EngineWriteRun.builder(provider, name, lanes, chunk, depth)
                        .directory(directory, Security.none())
                        .build()) {
            engine.publish("sink", engine.register(arena.allocate(bufferSize, 4096)), Access.anyPeer());
            System.out.println("READY");
            for (String l; (l = in.readLine()) != null; ) {
                long tag = Long.parseLong(l.substring("AWAIT ".length()));
                Notification n = engine.awaitTag(tag, Duration.ofSeconds(30));
                System.out.println((n == null ? "MISSING " : "TAG ") + tag);
            }
        }
    }
}
