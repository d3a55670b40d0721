package io.rdma4j.cli;

import io.rdma4j.libfabric.AddressVector;
import io.rdma4j.libfabric.CompletionQueue;
import io.rdma4j.libfabric.Completions;
import io.rdma4j.libfabric.Domain;
import io.rdma4j.libfabric.Endpoint;
import io.rdma4j.libfabric.Fabric;
import io.rdma4j.libfabric.InfoList;
import io.rdma4j.libfabric.Libfabric;
import io.rdma4j.libfabric.MemoryRegion;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The target process of {@code ./rdma4j demo}, started by {@link DemoCommand}. Over stdout it gives its endpoint name
 * and its region ({@code NAME hex}, {@code REGION hex}); over stdin it gets the initiator's name ({@code PEER hex}).
 * It then polls its completion queue (manual progress: the target must poll for tcp to move data) until the
 * initiator's final writedata arrives, says {@code ARRIVED}, checks every byte, and says {@code VERIFIED n} or
 * {@code MISMATCH offset}. It exits when its stdin closes: the initiator is gone.
 */
public final class DemoTarget {
    private DemoTarget() {
    }

    /** The byte pattern of the demo: each 8-byte word is derived from its offset, so the target can check it alone. */
    static long word(long offset) {
        long x = offset * 0x9E3779B97F4A7C15L;
        return x ^ (x >>> 29) ^ 0x5DEECE66DL;
    }

    public static void main(String[] args) throws Exception {
        String provider = args[0];
        long size = Long.parseLong(args[1]);
        HexFormat hex = HexFormat.of();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (InfoList infos = Libfabric.getinfo(DemoCommand.hints(provider));
                Fabric fabric = Fabric.open(infos.first());
                Arena arena = Arena.ofShared();
                Completions completions = new Completions(64)) {
            Domain domain = fabric.openDomain();
            CompletionQueue cq = domain.openCompletionQueue(1024);
            AddressVector av = domain.openAddressVector(2);
            Endpoint ep = domain.openEndpoint(cq, av);
            MemorySegment region = arena.allocate(size, 4096);
            MemoryRegion mr = domain.register(region);
            System.out.println("NAME " + hex.formatHex(ep.name()));
            System.out.println("REGION " + hex.formatHex(mr.remote().toBytes()));
            System.out.flush();
            String line = in.readLine();
            if (line == null || !line.startsWith("PEER ")) {
                throw new IllegalStateException("expected PEER <hex> from the initiator, got " + line);
            }
            av.insert(hex.parseHex(line.substring(5)));
            AtomicBoolean finished = new AtomicBoolean();
            Thread.ofPlatform().daemon().start(() -> {
                try {
                    while (in.readLine() != null) {
                        // the initiator says nothing more; EOF means it is gone
                    }
                } catch (IOException e) {
                    // same as EOF
                }
                if (!finished.get()) {
                    System.err.println("demo target: the initiator went away; exiting");
                    Runtime.getRuntime().halt(3);
                }
            });
            long deadline = System.nanoTime() + 300_000_000_000L;
            long marker = -1;
            while (marker < 0) {
                int n = cq.read(completions);
                for (int i = 0; i < n; i++) {
                    if (completions.hasRemoteData(i)) {
                        marker = completions.data(i);
                    }
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("no final writedata within 300 s");
                }
            }
            System.out.println("ARRIVED " + marker);
            System.out.flush();
            for (long off = 0; off < size; off += 8) {
                if (region.get(ValueLayout.JAVA_LONG_UNALIGNED, off) != word(off)) {
                    finished.set(true);
                    System.out.println("MISMATCH " + off);
                    System.out.flush();
                    return;
                }
            }
            finished.set(true);
            System.out.println("VERIFIED " + size);
            System.out.flush();
        }
    }
}
