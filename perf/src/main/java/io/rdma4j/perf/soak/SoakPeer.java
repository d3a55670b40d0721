package io.rdma4j.perf.soak;

import io.rdma4j.engine.Access;
import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.Notification;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.rendezvous.DirectoryServer;
import io.rdma4j.rendezvous.Security;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadPoolExecutor;

/**
 * The processes {@code ./rdma4j soak} kills with SIGKILL and restarts, each started with the soak's java and class
 * path, each ending when its stdin closes (the soak is gone):
 *
 * <ul>
 *   <li>{@code directory PORT}: a directory on 127.0.0.1:PORT, its state in memory, so a restart starts it empty;
 *   <li>{@code peer NAME DIRECTORY LEASE_MS}: engines {@code NAME-shm} and {@code NAME-tcp}, each publishing a buffer
 *       {@code soak} of {@link Traffic#REMOTE_BYTES}. For each notification with the top bit of its tag set it checks
 *       the bytes that landed against {@link Pattern} with the tag as seed, and answers {@code AWAIT PROVIDER TAG} on
 *       stdin with {@code TAG TAG OK LENGTH}, {@code TAG TAG BAD CORRUPT LENGTH} or {@code TAG TAG MISSING}. Every
 *       other notification is drained, so none pile up.
 * </ul>
 *
 * Both print {@code READY} once serving and answer {@code STATS} with {@code STATS} and their {@link Resources}.
 */
public final class SoakPeer {
    /** How long an {@code AWAIT} waits for its notification: the writer saw its write complete before asking. */
    static final Duration AWAIT = Duration.ofSeconds(10);

    private static final Object OUT = new Object();

    private SoakPeer() {}

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "directory" -> directory(Integer.parseInt(args[1]));
            case "peer" -> peer(args[1], args[2], Long.parseLong(args[3]), List.of(args[4].split(",")));
            default -> throw new IllegalArgumentException("unknown soak child " + args[0]);
        }
    }

    private static void say(String line) {
        synchronized (OUT) {
            System.out.println(line);
            System.out.flush();
        }
    }

    private static void directory(int port) throws Exception {
        try (DirectoryServer d =
                DirectoryServer.builder().bindAddress("127.0.0.1").port(port).start()) {
            say("READY " + d.target());
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String l; (l = in.readLine()) != null; ) {
                if (l.equals("STATS")) {
                    say("STATS " + Resources.self().line());
                }
            }
        }
        System.exit(0);
    }

    /** One engine of the peer: its buffer, and the verdicts on tagged writes not yet asked for. */
    private record Side(TransferEngine engine, MemorySegment memory, Map<Long, String> verdicts) {}

    private static void peer(String name, String directory, long leaseMs, List<String> providers) throws Exception {
        Arena arena = Arena.ofShared();
        Map<String, Side> sides = new LinkedHashMap<>();
        for (String provider : providers) {
            TransferEngine.Builder b = TransferEngine.builder()
                    .name(name + "-" + provider)
                    .directory(directory, Security.none())
                    .backend("libfabric")
                    .provider(provider)
                    .lanesPerNic(2)
                    .lease(Duration.ofMillis(leaseMs));
            TransferEngine e = (provider.equals("tcp") ? b.nicFilter("lo") : b).build();
            MemorySegment memory = arena.allocate(Traffic.REMOTE_BYTES, 4096);
            LocalBuffer buffer = e.register(memory);
            e.publish("soak", buffer, Access.anyPeer());
            Map<Long, String> verdicts = new LinkedHashMap<>(256, 0.75f, false) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<Long, String> eldest) {
                    return size() > 4096; // verdicts nobody asked for: the writer's side failed after the data landed
                }
            };
            Side side = new Side(e, memory, verdicts);
            sides.put(provider, side);
            Thread.ofPlatform().daemon().name("soak-drain-" + provider).start(() -> drain(side));
        }
        // AWAITs wait on these, created up front: a thread started on demand would count as the peer's growth
        ExecutorService awaiting = Executors.newFixedThreadPool(4);
        ((ThreadPoolExecutor) awaiting).prestartAllCoreThreads();
        say("READY " + name);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String l; (l = in.readLine()) != null; ) {
            String[] f = l.split(" ");
            switch (f[0]) {
                case "STATS" -> say("STATS " + Resources.self().line());
                case "AWAIT" -> {
                    Side side = sides.get(f[1]);
                    long tag = Long.parseLong(f[2]);
                    awaiting.execute(() -> say("TAG " + tag + " " + verdict(side, tag)));
                }
                default -> say("ERROR unknown command " + l);
            }
        }
        // the soak closed our stdin: it is done, or gone
        Runtime.getRuntime().halt(0);
    }

    private static void drain(Side side) {
        while (true) {
            Notification n;
            try {
                n = side.engine.notifications().poll(Duration.ofMillis(500));
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                return; // the engine closed
            }
            if (n == null || n.tag() >= 0) {
                continue;
            }
            long bad = Pattern.corruptBytes(side.memory.asSlice(n.offset(), n.length()), n.tag(), n.length());
            String verdict = bad == 0 ? "OK " + n.length() : "BAD " + bad + " " + n.length();
            synchronized (side.verdicts) {
                side.verdicts.put(n.tag(), verdict);
                side.verdicts.notifyAll();
            }
        }
    }

    private static String verdict(Side side, long tag) {
        long until = System.nanoTime() + AWAIT.toNanos();
        synchronized (side.verdicts) {
            while (true) {
                String v = side.verdicts.remove(tag);
                if (v != null) {
                    return v;
                }
                long left = until - System.nanoTime();
                if (left <= 0) {
                    return "MISSING";
                }
                try {
                    side.verdicts.wait(Math.max(1, left / 1_000_000));
                } catch (InterruptedException e) {
                    return "MISSING";
                }
            }
        }
    }
}
