package io.rdma4j.nvmeof.tcp;

import io.rdma4j.nvmeof.ConnectOptions;
import io.rdma4j.nvmeof.Controller;
import io.rdma4j.nvmeof.DiscoveryLog;
import io.rdma4j.nvmeof.HostIdentity;
import io.rdma4j.nvmeof.NamespaceInfo;
import io.rdma4j.nvmeof.Target;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.UUID;

/**
 * Not a test: the program that made the golden capture in {@code src/test/resources/nvme-tcp/nvmet} (its README says
 * how it was run). It drives this project's initiator through one scripted session against the Linux kernel target of
 * the test VM, so the capture holds every PDU type both sides exchange, with data whose bytes the tests can predict
 * ({@link NvmetCapture#pattern}).
 *
 * <p>Usage: {@code RecordNvmetCapture plain|digest|discovery HOST:PORT NQN}
 */
public final class RecordNvmetCapture {
    private RecordNvmetCapture() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            throw new IllegalArgumentException("usage: RecordNvmetCapture plain|digest|discovery HOST:PORT NQN");
        }
        Target target = Target.parseTcp(args[1]);
        // A fixed identity, so the capture names no real host and a re-recording differs only where the target does.
        ConnectOptions o = ConnectOptions.defaults()
                .withIoQueues(1)
                .withQueueDepth(32)
                .withIdentity(new HostIdentity(NvmetCapture.HOST_NQN, UUID.fromString(NvmetCapture.HOST_ID)));
        switch (args[0]) {
            case "discovery" -> {
                DiscoveryLog log = Controller.discover(target, o);
                log.entries()
                        .forEach(e -> System.out.println("discovered " + e.subsystemNqn() + " " + e.transportName()
                                + " " + e.address() + ":" + e.serviceId()));
            }
            case "plain" -> session(target, args[2], o);
            case "digest" -> session(target, args[2], o.withDigests(true, true));
            default -> throw new IllegalArgumentException("unknown session kind " + args[0]);
        }
    }

    /** Bring-up, Identify, writes (in-capsule and through R2T), reads of the same blocks, a flush, shutdown. */
    private static void session(Target target, String nqn, ConnectOptions o) throws Exception {
        try (Controller c = Controller.connect(target, nqn, o);
                Arena arena = Arena.ofShared()) {
            System.out.println(
                    c.info().model() + " serial " + c.info().serial() + ", namespaces " + c.activeNamespaces());
            NamespaceInfo ns = c.namespace(1);
            System.out.println("namespace 1: " + ns.blocks() + " blocks of " + ns.blockSize());
            for (int[] io : NvmetCapture.WRITES) {
                int lba = io[0];
                int len = io[1];
                MemorySegment buf = arena.allocate(len, 4096);
                buf.copyFrom(MemorySegment.ofArray(NvmetCapture.pattern(lba, len)));
                c.write(1, lba, buf).get();
            }
            c.flush(1).get();
            for (int[] io : NvmetCapture.WRITES) {
                MemorySegment buf = arena.allocate(io[1], 4096);
                c.read(1, io[0], buf).get();
                if (!Arrays.equals(buf.toArray(ValueLayout.JAVA_BYTE), NvmetCapture.pattern(io[0], io[1]))) {
                    throw new IllegalStateException("read-back of LBA " + io[0] + " differs from what was written");
                }
            }
            System.out.println("wrote and read back " + NvmetCapture.WRITES.length + " extents");
        }
    }
}
