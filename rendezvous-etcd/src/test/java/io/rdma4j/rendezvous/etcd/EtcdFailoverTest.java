package io.rdma4j.rendezvous.etcd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.Closeables;
import io.rdma4j.rendezvous.Announcement;
import io.rdma4j.rendezvous.DirectoryServer;
import io.rdma4j.rendezvous.Rendezvous;
import io.rdma4j.rendezvous.RendezvousException;
import io.rdma4j.rendezvous.Security;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;

/**
 * Three etcd members, three directories on them, announcers with ten publications each: one directory and one etcd
 * member are lost mid-run, and nothing announced or published is. {@code -Drdma4j.failover.peers=1000} runs the
 * full-size version of the same scenario and prints its numbers.
 */
class EtcdFailoverTest {
    private static final int PEERS = Integer.getInteger("rdma4j.failover.peers", 100);
    private static final int PUBLICATIONS = 10;
    private static final Duration LEASE = Duration.ofSeconds(5);

    @Test
    void losingADirectoryAndAnEtcdMemberLosesNoAnnouncementOrPublication() throws Exception {
        String missing = LocalEtcdCluster.unavailabilityCause();
        assumeTrue(missing == null, missing);
        List<AutoCloseable> open = new ArrayList<>();
        try {
            LocalEtcdCluster etcd = LocalEtcdCluster.start(Files.createTempDirectory("rdma4j-etcd-failover-"), 3);
            open.add(etcd);
            DirectoryServer[] dirs = new DirectoryServer[3];
            for (int i = 0; i < dirs.length; i++) {
                dirs[i] = DirectoryServer.builder().port(0).store(etcd.url()).start();
                open.add(dirs[i]);
            }
            String all = dirs[0].target() + "," + dirs[1].target() + "," + dirs[2].target();
            // announcers share a few clients, as simulated engines; every client starts on the directory to be lost
            List<Rendezvous> clients = new ArrayList<>();
            for (int i = 0; i < Math.max(1, PEERS / 100); i++) {
                Rendezvous r = Rendezvous.connect(all, Security.none());
                clients.add(r);
                open.add(r);
            }
            List<Announcement> announcers = new ArrayList<>();
            long t0 = System.nanoTime();
            for (int p = 0; p < PEERS; p++) {
                Announcement a = clients.get(p % clients.size()).announce(EtcdDirectoryTest.peer("sim-" + p, 1), LEASE);
                for (int b = 0; b < PUBLICATIONS; b++) {
                    a.publish(EtcdDirectoryTest.buffer("sim-" + p + "/b" + b, 1));
                }
                announcers.add(a);
            }
            double setupSeconds = (System.nanoTime() - t0) / 1e9;
            Rendezvous reader = Rendezvous.connect(all, Security.none());
            open.add(reader);

            long[] before = resolves(reader, 300);
            Thread killer = Thread.ofPlatform().start(() -> {
                try {
                    Thread.sleep(200);
                    dirs[0].close();
                    etcd.kill(0);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            long[] during = resolves(reader, 600);
            killer.join();
            // a lease longer: a heartbeat lost to the kills would have let one expire by now
            Thread.sleep(LEASE.toMillis() + 1000);
            long[] after = resolves(reader, 300);

            int lostPeers = 0;
            int lostBuffers = 0;
            int reannounced = 0;
            for (int p = 0; p < PEERS; p++) {
                if (reader.resolve("sim-" + p).isEmpty()) {
                    lostPeers++;
                }
                for (int b = 0; b < PUBLICATIONS; b++) {
                    if (reader.lookup("sim-" + p + "/b" + b).isEmpty()) {
                        lostBuffers++;
                    }
                }
                reannounced += announcers.get(p).reannouncements();
            }

            // a killed engine: nothing renews its lease, etcd expires it; its restart announces a new generation
            EtcdDirectoryTest.announceWithoutRenewing(dirs[1].target(), EtcdDirectoryTest.peer("killed", 1), 2000);
            long killedAt = System.nanoTime();
            while (reader.resolve("killed").isPresent()) {
                assertTrue(System.nanoTime() - killedAt < 30_000_000_000L, "the killed engine's lease never expired");
                Thread.sleep(50);
            }
            double expiredAfter = (System.nanoTime() - killedAt) / 1e9;
            try (Announcement restarted = reader.announce(EtcdDirectoryTest.peer("killed", 2), LEASE)) {
                assertEquals(2, reader.resolve("killed").orElseThrow().generation());
            }

            System.out.printf(
                    "failover: %d peers x %d publications on 3 etcd members and 3 directories (set up in %.1f s);"
                            + " killed 1 directory and 1 etcd member; lost %d peers, %d publications, %d"
                            + " re-announcements%n",
                    PEERS, PUBLICATIONS, setupSeconds, lostPeers, lostBuffers, reannounced);
            System.out.printf(
                    "failover: resolve p50/p99 before %s, during %s, after %s; failed resolves during: %d%n",
                    percentiles(before), percentiles(during), percentiles(after), failures(during));
            System.out.printf(
                    "failover: killed engine (lease 2 s) gone after %.1f s; its restart resolved at generation 2%n",
                    expiredAfter);
            assertEquals(0, lostPeers, "announcements lost");
            assertEquals(0, lostBuffers, "publications lost");
            assertEquals(0, failures(after), "resolves failed after the kills");
        } finally {
            Closeables.closeAll(open.reversed());
        }
    }

    /** @return the latency of each resolve of a random announcer in nanoseconds, negative for a failed one */
    private static long[] resolves(Rendezvous r, int n) {
        long[] out = new long[n];
        for (int i = 0; i < n; i++) {
            long t = System.nanoTime();
            boolean ok;
            try {
                ok = r.resolve("sim-" + ThreadLocalRandom.current().nextInt(PEERS))
                        .isPresent();
            } catch (RendezvousException e) {
                ok = false;
            }
            long d = System.nanoTime() - t;
            out[i] = ok ? d : -d;
        }
        return out;
    }

    private static long failures(long[] lat) {
        return Arrays.stream(lat).filter(l -> l < 0).count();
    }

    private static String percentiles(long[] lat) {
        long[] s = Arrays.stream(lat).map(Math::abs).sorted().toArray();
        return String.format(
                "%.2f/%.2f ms", s[s.length / 2] / 1e6, s[Math.min(s.length - 1, (int) (s.length * 0.99))] / 1e6);
    }
}
