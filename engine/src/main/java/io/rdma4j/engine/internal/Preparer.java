package io.rdma4j.engine.internal;

import io.rdma4j.ClosedException;
import io.rdma4j.InvalidArgumentException;
import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.MemoryLocation;
import io.rdma4j.engine.PeerLostException;
import io.rdma4j.engine.Plan;
import io.rdma4j.engine.RemoteBuffer;
import io.rdma4j.engine.Transfer;
import io.rdma4j.engine.TransferException;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.engine.spi.LaneDescriptor;
import io.rdma4j.rendezvous.LaneInfo;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Everything before a transfer is posted: the arguments checked, the peer connected, the lanes ranked by distance to
 * the memory on both sides and the bytes assigned to the best of them. Nothing is posted until every check passed.
 */
final class Preparer {
    /**
     * The lane pairs to a peer ranked for one target and source memory, kept on the {@link PeerLink} while the lanes'
     * state it was ranked in holds: a small write takes them from here instead of ranking again, which allocated a
     * candidate per lane, two lists and a plan per transfer.
     *
     * @param usable per local lane (bit), whether it is connected, reaches the target and is in service
     * @param paused per local lane (bit), whether it was cooling down
     */
    record Ranked(
            MemoryLocation target,
            MemoryLocation source,
            long usable,
            long paused,
            Planner.Candidate[] all,
            List<Planner.Candidate> best) {}

    /** Best level first: the worse of each candidate's two sides. */
    private static final Comparator<Planner.Candidate> BY_LEVEL =
            Comparator.comparing((Planner.Candidate c) -> Level.worse(c.localLevel(), c.remoteLevel()));

    private final String name;
    private final LaneRuntime[] lanes;
    private final List<LaneDescriptor> descriptors;
    private final LaneLevels levels;
    private final Planner planner;
    private final Map<Integer, Double> laneWeights;
    private final RegistrationCache registrations;
    private final Membership membership;
    private final Connector connector;
    private final ActiveTransfers active;
    private final EngineMetrics metrics;
    private final AtomicInteger rotation = new AtomicInteger();
    /** Per lane: its NIC as plans name it, built once rather than for every transfer. */
    private final String[] localNics;

    Preparer(
            String name,
            LaneRuntime[] lanes,
            List<LaneDescriptor> descriptors,
            LaneLevels levels,
            EngineConfig config,
            RegistrationCache registrations,
            Membership membership,
            Connector connector,
            ActiveTransfers active,
            EngineMetrics metrics) {
        this.name = name;
        this.lanes = lanes;
        this.descriptors = descriptors;
        this.levels = levels;
        this.planner = new Planner(config.chunkBytes(), config.smallThreshold());
        this.laneWeights = config.laneWeights();
        this.registrations = registrations;
        this.membership = membership;
        this.connector = connector;
        this.active = active;
        this.metrics = metrics;
        this.localNics = descriptors.stream().map(Preparer::nic).toArray(String[]::new);
    }

    BufferImpls.Local local(LocalBuffer b, String what) {
        Objects.requireNonNull(b, what);
        if (!(b instanceof BufferImpls.Local l) || l.registrations != registrations) {
            throw new InvalidArgumentException(what + " was not registered with this engine (" + name
                    + "): register it with engine.register(segment)");
        }
        if (l.isClosed()) {
            throw new ClosedException(what + " " + l, "register the memory again");
        }
        Args.alive(l.segment, what);
        return l;
    }

    BufferImpls.Remote remote(RemoteBuffer b, String what) {
        Objects.requireNonNull(b, what);
        if (!(b instanceof BufferImpls.Remote r) || r.peer.membership != membership) {
            throw new InvalidArgumentException(
                    what + " was not resolved by this engine: use engine.peer(name).buffer(name)");
        }
        return r;
    }

    /**
     * Every check happens here, before anything is posted; {@return the transfer, ready for {@link Dispatcher#launch}
     * and holding a reference on its local registration}
     */
    TransferImpl prepare(
            byte op,
            LocalBuffer localBuffer,
            long localOffset,
            RemoteBuffer remoteBuffer,
            long remoteOffset,
            long length,
            TransferOptions options) {
        TransferOptions o = options == null ? TransferOptions.DEFAULT : options;
        String dir = op == Op.READ ? "read" : "write";
        BufferImpls.Local l = local(localBuffer, op == Op.READ ? "read target" : "write source");
        BufferImpls.Remote r = remote(remoteBuffer, op == Op.READ ? "read source" : "write target");
        if (length < 0) {
            throw new InvalidArgumentException(dir + " length must be >= 0, got " + length);
        }
        if (!l.segment.scope().isAlive()) {
            Args.alive(l.segment, (op == Op.READ ? "read target " : "write source ") + l);
        }
        Args.range(l.segment.byteSize(), localOffset, length, op == Op.READ ? "read target " : "write source ", l);
        Args.range(r.length(), remoteOffset, length, op == Op.READ ? "read source " : "write target ", r);
        return plan(op, l, localOffset, r, remoteOffset, length, o, null);
    }

    /**
     * Checks a write batch made by this engine and plans it as one transfer over the batch's bytes (its descriptors'
     * ranges were checked as they were added). Holds a registration reference on success.
     */
    TransferImpl prepareBatch(BatchImpl b, TransferOptions options) {
        TransferOptions o = options == null ? TransferOptions.DEFAULT : options;
        BufferImpls.Local l = local(b.source, "batch source");
        BufferImpls.Remote r = remote(b.target, "batch target");
        if (b.count == 0) {
            throw new InvalidArgumentException("the write batch is empty: add descriptors before writing it");
        }
        if (o.crc32c()) {
            throw new InvalidArgumentException("a write batch cannot carry a CRC32C: the checksum covers one contiguous"
                    + " range; write the blocks that need one with write(source, offset, target, offset, length, ...)");
        }
        if (l.device != null) {
            throw new InvalidArgumentException("a write batch moves host memory, and " + l + " is device memory that"
                    + " is staged per write: use writeAll with one request per block");
        }
        Args.range(l.segment, 0, 0, "batch source " + l);
        return plan(Op.WRITE, l, 0, r, 0, b.bytes(), o, b);
    }

    private TransferImpl plan(
            byte op,
            BufferImpls.Local l,
            long localOffset,
            BufferImpls.Remote r,
            long remoteOffset,
            long length,
            TransferOptions o,
            BatchImpl batch) {
        PeerLink link = r.peer.link;
        if (link.lost()) {
            throw new PeerLostException("peer '" + link.name + "' is gone: " + link.lostReason);
        }
        if (r.generation() <= 0 && r.info.lanes().isEmpty()) {
            throw new TransferException(r + " has no lane keys: its owner published none, so no lane can reach it");
        }
        connector.ensureConnected(link);
        Ranked ranked = ranked(link, r, l.location);
        if (ranked.all().length == 0) {
            throw new TransferException("no usable lane to '" + link.name + "' for " + r + ": " + laneHealth());
        }
        List<Planner.Candidate> best = ranked.best();
        int turn = rotation.getAndIncrement();
        Planner.Assignment a = planner.oneLane(best.size(), length) ? null : planner.assign(best, length, turn);
        Planner.Candidate single = a == null ? best.get(Math.floorMod(turn, best.size())) : null;
        DeviceBuffers.check(l, op, o);
        registrations.retain(l.entry);
        return new TransferImpl(
                active,
                registrations,
                metrics,
                op,
                l,
                localOffset,
                r,
                remoteOffset,
                length,
                o,
                link,
                ranked.all(),
                a,
                single,
                batch);
    }

    /** {@return the ranked lane pairs to {@code link} for target {@code r} and source memory {@code source}} */
    private Ranked ranked(PeerLink link, BufferImpls.Remote r, MemoryLocation source) {
        // at most 64 lanes (EngineCore refuses more): one bit each
        long usable = usable(link, r);
        long paused = paused(usable, System.nanoTime());
        Ranked c = link.ranked;
        if (c != null
                && c.usable() == usable
                && c.paused() == paused
                && c.target().equals(r.location)
                && c.source().equals(source)) {
            return c;
        }
        // ranked from the masks themselves, so it always matches its key; a racing transfer may rank it again
        List<Planner.Candidate> all = candidates(link, r, source, usable, paused);
        c = new Ranked(r.location, source, usable, paused, all.toArray(new Planner.Candidate[0]), Planner.best(all));
        link.ranked = c;
        return c;
    }

    private long usable(PeerLink link, BufferImpls.Remote r) {
        long m = 0;
        for (int i = 0; i < lanes.length; i++) {
            if (link.connection[i] >= 0 && r.hasLane(link.remoteLane[i]) && !lanes[i].failed) {
                m |= 1L << i;
            }
        }
        return m;
    }

    private long paused(long usable, long now) {
        long m = 0;
        for (long u = usable; u != 0; u &= u - 1) {
            int i = Long.numberOfTrailingZeros(u);
            if (lanes[i].paused(now)) {
                m |= 1L << i;
            }
        }
        return m;
    }

    private String laneHealth() {
        StringBuilder sb = new StringBuilder();
        for (LaneRuntime l : lanes) {
            sb.append(l.describe())
                    .append(
                            l.failed
                                    ? " out of service: " + l.lastError
                                    : l.lastError != null ? " last error: " + l.lastError : " healthy")
                    .append("; ");
        }
        return sb.toString();
    }

    /** The candidates of the lanes set in {@code usable}, those set in {@code paused} ranked one level worse. */
    private List<Planner.Candidate> candidates(
            PeerLink link, BufferImpls.Remote r, MemoryLocation localMem, long usable, long paused) {
        List<Planner.Candidate> out = new ArrayList<>();
        for (long u = usable; u != 0; u &= u - 1) {
            int i = Long.numberOfTrailingZeros(u);
            int rl = link.remoteLane[i];
            LaneDescriptor d = descriptors.get(i);
            LaneInfo remote = link.remote(rl);
            Level ll = levels.level(d.pciAddress(), d.numaNode(), localMem);
            Level rlv = LaneLevels.byNuma(remote == null ? -1 : remote.numaNode(), r.location.numaNode());
            double w = laneWeights.getOrDefault(i, d.bandwidthGbps());
            // a lane cooling down ranks one level worse so healthy lanes carry new work first
            if ((paused & (1L << i)) != 0 && ll != Level.SYS) {
                ll = Level.values()[ll.ordinal() + 1];
            }
            out.add(new Planner.Candidate(i, localNics[i], ll, rl, link.remoteNic(rl), rlv, w));
        }
        out.sort(BY_LEVEL);
        return out;
    }

    static String nic(LaneDescriptor d) {
        return d.pciAddress() != null ? d.pciAddress() : d.device() + "#" + d.index();
    }

    static String remoteNic(LaneInfo l) {
        return l.pciAddress() != null && !l.pciAddress().isEmpty() ? l.pciAddress() : l.device() + "#" + l.index();
    }

    Plan explain(LocalBuffer source, long sourceOffset, RemoteBuffer target, long targetOffset, long length) {
        BufferImpls.Local l = local(source, "explain source");
        BufferImpls.Remote r = remote(target, "explain target");
        Args.range(l.segment, sourceOffset, length, "explain source " + l);
        Args.range(r.length(), targetOffset, length, "explain target " + r);
        connector.ensureConnected(r.peer.link);
        Ranked ranked = ranked(r.peer.link, r, l.location);
        List<Planner.Candidate> all = List.of(ranked.all());
        if (all.isEmpty()) {
            return new Plan(List.of(), length, "no usable lane to '" + r.peer.name() + "': " + laneHealth());
        }
        List<Planner.Candidate> best = ranked.best();
        Planner.Assignment a = planner.assign(best, length, rotation.get());
        return planner.toPlan(a, length, levels.source() + "; " + planner.describe(all, best, length, a.size()));
    }

    /**
     * Device memory's side of launching (see {@link DeviceBuffers}): writes from it wait for its producer and fill
     * their staging range before anything of the batch is posted; reads into it hold one more reference for the copy
     * back.
     */
    void beforeDevice(List<TransferImpl> batch) {
        int done = 0;
        try {
            for (TransferImpl p : batch) {
                if (p.local.device != null) {
                    if (p.op == Op.WRITE) {
                        try {
                            DeviceBuffers.beforeWrite(p.local, p.localOffset, p.total);
                        } catch (RuntimeException e) {
                            // the device's own failure (its driver's, or a CudaException) becomes a transfer's, as
                            // Rdma4jException documents; the write is refused before anything is posted
                            throw new TransferException(
                                    "write of " + p.total + " bytes from " + p.local
                                            + ": making the device memory ready to send (its producer, then the copy to host)"
                                            + " failed, nothing was posted: " + e.getMessage(),
                                    e);
                        }
                    } else {
                        registrations.retain(p.local.entry);
                    }
                }
                done++;
            }
        } catch (RuntimeException e) {
            for (int i = 0; i < batch.size(); i++) {
                TransferImpl p = batch.get(i);
                registrations.release(p.local.entry);
                if (i < done && p.local.device != null && p.op == Op.READ) {
                    registrations.release(p.local.entry);
                }
            }
            throw e;
        }
    }

    Transfer afterDevice(TransferImpl p, Transfer t) {
        return p.local.device != null && p.op == Op.READ
                ? DeviceBuffers.afterRead(p.local, p.localOffset, p.total, t, registrations)
                : t;
    }
}
