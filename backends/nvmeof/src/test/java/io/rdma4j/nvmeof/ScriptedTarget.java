package io.rdma4j.nvmeof;

import io.rdma4j.nvmeof.internal.Cqe;
import io.rdma4j.nvmeof.internal.Le;
import io.rdma4j.nvmeof.internal.Sqe;
import io.rdma4j.nvmeof.tcp.Pdu;
import io.rdma4j.nvmeof.tcp.PduCodec;
import io.rdma4j.nvmeof.tcp.PduReader;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A scripted NVMe/TCP peer for fault injection on the host, where no kernel target exists: it answers bring-up and I/O
 * from a RAM namespace so a test can reach the point where it breaks the protocol on purpose ({@link #fault}). The
 * real-target tests run against Linux nvmet in the test VM ({@code *GuestTest}). Public, and shipped in this module's
 * test-jar, so the command line's tests can drive {@code ./rdma4j nvme} against it on the host.
 */
public final class ScriptedTarget implements AutoCloseable {
    /** The one I/O subsystem it serves (namespace 1, 512-byte blocks); the discovery NQN is answered too. */
    public static final String NQN = "nqn.2026-01.io.rdma4j:scripted";

    /**
     * Decides what to do with a PDU about to be sent: return the bytes to send (maybe altered), or null to drop the
     * connection.
     */
    interface Fault {
        byte[] apply(int qid, Pdu pdu, byte[] encoded);
    }

    final ServerSocket server;
    final byte[] storage;
    final int blockSize = 512;
    volatile long maxH2CData = 131072;
    volatile int inCapsuleBytes = 4096;
    volatile int mdts = 5; // 128 KiB with 4 KiB pages
    volatile int c2hPiece = 1 << 20;
    volatile boolean successFlag = true;
    volatile int grantQueues = 8;
    volatile int mqes0 = 127;
    volatile boolean answerReads = true;
    /** Identify Controller AERL (0-based) and OAES. */
    volatile int aerl = 3;

    volatile int oaes = 1 << 8;
    /** What the Changed Namespace List log (04h) holds; reading it (RAE 0) clears it. */
    volatile List<Long> changedNamespaces = List.of();
    /** Every Get Log Page seen: CDW10 (LID, RAE bit 15, NUMDL). */
    final List<Integer> logReads = new CopyOnWriteArrayList<>();

    volatile int asyncEventConfig = -1;
    private volatile Conn admin;
    volatile Fault fault = (q, p, b) -> b;
    final AtomicInteger keepAlives = new AtomicInteger();
    final AtomicInteger shutdowns = new AtomicInteger();
    final AtomicInteger hostTermReqs = new AtomicInteger();
    final List<String> hostNqns = new CopyOnWriteArrayList<>();
    final Map<Integer, AtomicInteger> maxInFlight = new ConcurrentHashMap<>();
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    /** @param capacityBytes size of namespace 1, kept in RAM */
    public ScriptedTarget(int capacityBytes) throws IOException {
        this(new byte[capacityBytes]);
    }

    /**
     * A target whose namespace 1 is {@code disk}, used as it is: a target restarted on what its predecessor left
     * ({@code new ScriptedTarget(dead.stored(0, size))} after {@code dead.close()}, as {@code ./rdma4j soak} does).
     *
     * @param disk the namespace's bytes, a multiple of 512
     */
    public ScriptedTarget(byte[] disk) throws IOException {
        storage = disk;
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        acceptor = Thread.ofPlatform().daemon().name("scripted-target").start(this::acceptLoop);
    }

    /** @return where it listens: 127.0.0.1 and a port of its own */
    public Target target() {
        return Target.tcp("127.0.0.1", server.getLocalPort());
    }

    /** @return a copy of namespace 1's bytes from {@code offset}: what the host's writes left there */
    public byte[] stored(int offset, int length) {
        return java.util.Arrays.copyOfRange(storage, offset, offset + length);
    }

    /** Drops every connection, as a target that went away. */
    void dropAll() {
        for (Socket s : sockets) {
            try {
                s.close();
            } catch (IOException ignored) {
                // already gone
            }
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        dropAll();
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                // A read's C2HData and CapsuleResp go out as two small writes: without this, Nagle holds the second
                // until the first is acknowledged, a delayed-ACK stall on every command.
                s.setTcpNoDelay(true);
                sockets.add(s);
                Thread.ofPlatform().daemon().name("scripted-target-conn").start(() -> serve(s));
            } catch (IOException e) {
                return;
            }
        }
    }

    private final class Conn {
        final Socket s;
        final OutputStream out;
        PduCodec.Settings tx = PduCodec.Settings.INITIAL;
        int qid = -1;
        int inFlight;
        final Map<Integer, byte[]> pendingWrites = new HashMap<>();
        final Map<Integer, byte[]> pendingSqe = new HashMap<>();
        final Map<Integer, Integer> received = new HashMap<>();
        /** Asynchronous Event Requests held (by CID), completed by {@link #fireAsyncEvent}. */
        final java.util.Deque<Integer> heldAers = new java.util.concurrent.ConcurrentLinkedDeque<>();

        Conn(Socket s) throws IOException {
            this.s = s;
            this.out = s.getOutputStream();
        }

        synchronized void send(Pdu p) throws IOException {
            byte[] b = PduCodec.encode(p, tx);
            byte[] f = fault.apply(qid, p, b);
            if (f == null) {
                s.close();
                throw new IOException("fault: connection dropped");
            }
            out.write(f);
            out.flush();
        }

        void complete(int cid, int dw0, int sct, int sc) throws IOException {
            inFlight--;
            send(new Pdu.CapsuleResp(new Cqe(dw0, 0, 0, Math.max(qid, 0), cid, sct << 9 | sc << 1).encode()));
        }
    }

    /** @return Asynchronous Event Requests outstanding on the current admin connection */
    int heldAsyncEventRequests() {
        Conn c = admin;
        return c == null ? 0 : c.heldAers.size();
    }

    /** Completes the oldest held Asynchronous Event Request with {@code dw0} (type, information, log page). */
    void fireAsyncEvent(int dw0) throws IOException {
        Conn c = admin;
        Integer cid = c == null ? null : c.heldAers.poll();
        if (cid == null) {
            throw new IllegalStateException("no Asynchronous Event Request is outstanding");
        }
        c.send(new Pdu.CapsuleResp(new Cqe(dw0, 0, 0, 0, cid, 0).encode()));
    }

    private long cap() {
        return mqes0 | 1L << 16 | 0x1eL << 24 | 1L << 37;
    }

    private void serve(Socket s) {
        try (s) {
            Conn c = new Conn(s);
            PduReader reader = new PduReader(new BufferedInputStream(s.getInputStream()), 8 << 20);
            Pdu.IcReq req = (Pdu.IcReq) reader.read();
            c.send(new Pdu.IcResp(0, 0, req.headerDigest(), req.dataDigest(), maxH2CData));
            reader.settings(new PduCodec.Settings(req.headerDigest(), req.dataDigest(), 0), 8 << 20);
            c.tx = new PduCodec.Settings(req.headerDigest(), req.dataDigest(), req.hpda());
            int cc = 0;
            while (true) {
                Pdu p = reader.read();
                if (p == null) {
                    return;
                }
                switch (p) {
                    case Pdu.CapsuleCmd cmd -> {
                        c.inFlight++;
                        maxInFlight
                                .computeIfAbsent(c.qid, k -> new AtomicInteger())
                                .accumulateAndGet(c.inFlight, Math::max);
                        cc = command(c, cmd, cc);
                    }
                    case Pdu.H2CData h -> {
                        byte[] buf = c.pendingWrites.get(h.cccid());
                        System.arraycopy(h.data(), 0, buf, (int) h.datao(), h.data().length);
                        int got = c.received.merge(h.cccid(), h.data().length, Integer::sum);
                        if (got == buf.length) {
                            byte[] sqe = c.pendingSqe.remove(h.cccid());
                            c.pendingWrites.remove(h.cccid());
                            c.received.remove(h.cccid());
                            System.arraycopy(buf, 0, storage, (int) (Le.i64(sqe, 40) * blockSize), buf.length);
                            c.complete(h.cccid(), 0, 0, 0);
                        }
                    }
                    case Pdu.TermReq t -> {
                        hostTermReqs.incrementAndGet();
                        return;
                    }
                    default -> throw new IOException("unexpected " + p);
                }
            }
        } catch (IOException | RuntimeException e) {
            // the host closed, or a fault dropped the connection
        }
    }

    private int command(Conn c, Pdu.CapsuleCmd cmd, int cc) throws IOException {
        byte[] sqe = cmd.sqe();
        int cid = Sqe.cid(sqe);
        int op = Sqe.opcode(sqe);
        if (c.qid != 0 && c.qid != -1 && op != Sqe.OPC_FABRICS) {
            io(c, cmd, sqe, cid, op);
            return cc;
        }
        switch (op) {
            case Sqe.OPC_FABRICS -> {
                switch (Sqe.fctype(sqe)) {
                    case Sqe.FCTYPE_CONNECT -> {
                        byte[] d = cmd.data();
                        if (!Le.ascii(d, 256, 256).equals(NQN)
                                && !Le.ascii(d, 256, 256).equals(Controller.DISCOVERY_NQN)) {
                            c.complete(cid, 1 << 16 | 256, 1, 0x82);
                            return cc;
                        }
                        hostNqns.add(Le.ascii(d, 512, 256));
                        c.qid = Le.u16(sqe, 42);
                        if (c.qid == 0) {
                            admin = c;
                        }
                        c.complete(cid, 7, 0, 0);
                    }
                    case Sqe.FCTYPE_PROPERTY_GET -> {
                        long ofst = Le.u32(sqe, 44);
                        long v = ofst == Sqe.PROP_CAP
                                ? cap()
                                : ofst == Sqe.PROP_VS
                                        ? 0x10400
                                        : ofst == Sqe.PROP_CC
                                                ? cc
                                                : ofst == Sqe.PROP_CSTS
                                                        ? (cc & 1) | ((cc >>> 14 & 3) != 0 ? 2 << 2 : 0)
                                                        : 0;
                        c.inFlight--;
                        c.send(new Pdu.CapsuleResp(new Cqe((int) v, (int) (v >>> 32), 0, 0, cid, 0).encode()));
                    }
                    case Sqe.FCTYPE_PROPERTY_SET -> {
                        cc = (int) Le.i64(sqe, 48);
                        if ((cc >>> 14 & 3) != 0) {
                            shutdowns.incrementAndGet();
                        }
                        c.complete(cid, 0, 0, 0);
                    }
                    default -> c.complete(cid, 0, 0, 0x01);
                }
            }
            case Sqe.OPC_IDENTIFY -> {
                byte[] d = new byte[4096];
                int cns = Sqe.cdw(sqe, 10) & 0xff;
                if (cns == Sqe.CNS_CONTROLLER) {
                    Le.putAscii(d, 4, 20, "SCRIPTED0001", "sn");
                    Le.putAscii(d, 24, 40, "rdma4j scripted peer", "mn");
                    d[77] = (byte) mdts;
                    Le.put16(d, 78, 7);
                    Le.put32(d, 92, oaes);
                    d[259] = (byte) aerl;
                    Le.put16(d, 320, 1);
                    Le.put32(d, 516, 1);
                    Le.put16(d, 520, 0x8);
                    Le.putAscii(d, 768, 256, NQN, "subnqn");
                    Le.put32(d, 1792, (inCapsuleBytes + 64) / 16);
                    Le.put32(d, 1796, 1);
                } else if (cns == Sqe.CNS_ACTIVE_NS_LIST) {
                    Le.put32(d, 0, 1);
                } else if (cns == Sqe.CNS_NAMESPACE && Sqe.nsid(sqe) == 1) {
                    Le.put64(d, 0, storage.length / blockSize);
                    Le.put64(d, 8, storage.length / blockSize);
                    d[128 + 2] = 9;
                }
                dataIn(c, cid, d);
            }
            case Sqe.OPC_SET_FEATURES -> {
                if ((Sqe.cdw(sqe, 10) & 0xff) == Sqe.FID_ASYNC_EVENT_CONFIG) {
                    asyncEventConfig = Sqe.cdw(sqe, 11);
                    c.complete(cid, asyncEventConfig, 0, 0);
                } else {
                    c.complete(cid, (grantQueues - 1) << 16 | (grantQueues - 1), 0, 0);
                }
            }
            case Sqe.OPC_ASYNC_EVENT -> c.heldAers.add(cid);
            case Sqe.OPC_KEEP_ALIVE -> {
                keepAlives.incrementAndGet();
                c.complete(cid, 0, 0, 0);
            }
            case Sqe.OPC_GET_LOG_PAGE -> {
                logReads.add(Sqe.cdw(sqe, 10));
                if ((Sqe.cdw(sqe, 10) & 0xff) == Sqe.LID_CHANGED_NAMESPACES) {
                    byte[] d = new byte[4096];
                    List<Long> changed = changedNamespaces;
                    for (int i = 0; i < changed.size(); i++) {
                        Le.put32(d, i * 4, (int) (long) changed.get(i));
                    }
                    if ((Sqe.cdw(sqe, 10) & 0x8000) == 0) {
                        changedNamespaces = List.of();
                    }
                    dataIn(c, cid, d);
                    return cc;
                }
                byte[] log = new byte[3 * 1024];
                Le.put64(log, 0, 42);
                Le.put64(log, 8, 2);
                for (int i = 0; i < 2; i++) {
                    int o = 1024 + i * 1024;
                    log[o] = 3;
                    log[o + 1] = 1;
                    log[o + 2] = (byte) (i == 0 ? 3 : 2);
                    Le.putAscii(log, o + 32, 32, "4420", "svc");
                    Le.putAscii(log, o + 256, 256, i == 0 ? Controller.DISCOVERY_NQN : NQN, "nqn");
                    Le.putAscii(log, o + 512, 256, "127.0.0.1", "addr");
                }
                int numd = ((Sqe.cdw(sqe, 10) >>> 16) | (Sqe.cdw(sqe, 11) & 0xffff) << 16) + 1;
                long lpo = (Sqe.cdw(sqe, 12) & 0xffffffffL) | (long) Sqe.cdw(sqe, 13) << 32;
                byte[] d = new byte[numd * 4];
                System.arraycopy(log, (int) lpo, d, 0, (int) Math.max(0, Math.min(d.length, log.length - lpo)));
                dataIn(c, cid, d);
            }
            default -> c.complete(cid, 0, 0, 0x01);
        }
        return cc;
    }

    private void io(Conn c, Pdu.CapsuleCmd cmd, byte[] sqe, int cid, int op) throws IOException {
        long slba = Le.i64(sqe, 40);
        int blocks = (Sqe.cdw(sqe, 12) & 0xffff) + 1;
        long capacity = storage.length / blockSize;
        if (op != Sqe.OPC_FLUSH && slba + blocks > capacity) {
            c.complete(cid, 0, 0, 0x80);
            return;
        }
        if (Sqe.nsid(sqe) != 1) {
            c.complete(cid, 0, 0, 0x0b);
            return;
        }
        int off = (int) (slba * blockSize);
        int len = blocks * blockSize;
        switch (op) {
            case Sqe.OPC_READ -> {
                if (!answerReads) {
                    return;
                }
                byte[] d = new byte[len];
                System.arraycopy(storage, off, d, 0, len);
                dataIn(c, cid, d);
            }
            case Sqe.OPC_WRITE -> {
                if (Sqe.sglIdentifier(sqe) == Sqe.SGL_DATA_BLOCK_OFFSET) {
                    if (cmd.data().length != len || len > inCapsuleBytes) {
                        c.complete(cid, 0, 0, 0x0f);
                        return;
                    }
                    System.arraycopy(cmd.data(), 0, storage, off, len);
                    c.complete(cid, 0, 0, 0);
                } else {
                    c.pendingWrites.put(cid, new byte[len]);
                    c.pendingSqe.put(cid, sqe);
                    c.send(new Pdu.R2T(cid, cid + 100, 0, len));
                }
            }
            case Sqe.OPC_WRITE_ZEROES -> {
                java.util.Arrays.fill(storage, off, off + len, (byte) 0);
                c.complete(cid, 0, 0, 0);
            }
            default -> c.complete(cid, 0, 0, 0);
        }
    }

    private void dataIn(Conn c, int cid, byte[] d) throws IOException {
        // Read once: a test may flip it as soon as the host completed this command by the SUCCESS flag, which must not
        // make this command get a CapsuleResp too.
        boolean successFlag = this.successFlag;
        List<Pdu.C2HData> pieces = new ArrayList<>();
        for (int o = 0; o < d.length; o += c2hPiece) {
            int n = Math.min(c2hPiece, d.length - o);
            boolean last = o + n == d.length;
            pieces.add(new Pdu.C2HData(cid, o, last, last && successFlag, java.util.Arrays.copyOfRange(d, o, o + n)));
        }
        for (Pdu.C2HData p : pieces) {
            c.send(p);
        }
        if (successFlag) {
            c.inFlight--;
        } else {
            c.complete(cid, 0, 0, 0);
        }
    }
}
