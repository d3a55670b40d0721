package io.rdma4j.nvmeof.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.nvmeof.ControllerInfo;
import io.rdma4j.nvmeof.DiscoveryLog;
import io.rdma4j.nvmeof.NamespaceInfo;
import io.rdma4j.nvmeof.internal.Cqe;
import io.rdma4j.nvmeof.internal.Le;
import io.rdma4j.nvmeof.internal.Sqe;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Golden bytes from the project's own capture of the Linux kernel target ({@link NvmetCapture}): every PDU decodes,
 * re-encodes to the same bytes, and means what the trace shows. What the kernel target does differs from SPDK's
 * ({@code CapturedSessionsTest}, on ../shared): reads end with a CapsuleResp after the C2HData (the host did not
 * disable SQ flow control), MAXH2CDATA and in-capsule size are its own, and the Asynchronous Event Requests come back
 * aborted at shutdown.
 */
class NvmetCapturedSessionsTest {
    private static final String DISCOVERY_NQN = "nqn.2014-08.org.nvmexpress.discovery";

    /** A command as sent, and what came back for it (data PDUs, R2Ts and the completion). */
    /**
     * Pairs commands with their replies by command identifier: a CID is reused only after its command completed, so a
     * reply for CID n belongs to the oldest command with CID n not yet completed. (The Asynchronous Event Requests stay
     * outstanding while other admin commands come and go, so completions are not in command order.)
     */
    private static List<Exchange> exchanges(Captures.Session s) {
        Map<Integer, ArrayDeque<Pdu.CapsuleCmd>> sent = new HashMap<>();
        for (Pdu p : Exchange.decodeAll(s.toTarget())) {
            if (p instanceof Pdu.CapsuleCmd c) {
                sent.computeIfAbsent(Sqe.cid(c.sqe()), k -> new ArrayDeque<>()).add(c);
            }
        }
        List<Pdu> in = Exchange.decodeAll(s.fromTarget());
        Map<Integer, List<Pdu>> pending = new HashMap<>();
        List<Exchange> ex = new ArrayList<>();
        for (Pdu p : in.subList(1, in.size())) {
            int cid;
            Cqe done = null;
            switch (p) {
                case Pdu.CapsuleResp r -> {
                    done = Cqe.parse(r.cqe());
                    cid = done.cid();
                }
                case Pdu.C2HData d -> {
                    cid = d.cccid();
                    done = d.success() ? Cqe.success(cid) : null;
                }
                case Pdu.R2T r -> cid = r.cccid();
                default -> throw new AssertionError("unexpected " + p + " from the target");
            }
            List<Pdu> replies = pending.computeIfAbsent(cid, k -> new ArrayList<>());
            replies.add(p);
            if (done != null) {
                Pdu.CapsuleCmd c = sent.getOrDefault(cid, new ArrayDeque<>()).poll();
                assertTrue(c != null, "a completion for CID " + cid + ", which has no command outstanding");
                ex.add(new Exchange(c, List.copyOf(replies), done));
                pending.remove(cid);
            }
        }
        assertTrue(pending.isEmpty(), "replies left without a completion: " + pending);
        assertTrue(sent.values().stream().allMatch(ArrayDeque::isEmpty), "commands left without a completion");
        return ex;
    }

    private static Exchange find(List<Exchange> ex, int opcode, int cdw10) {
        return ex.stream()
                .filter(e -> e.opcode() == opcode && Sqe.cdw(e.cmd().sqe(), 10) == cdw10)
                .findFirst()
                .orElseThrow(() -> new AssertionError("no command " + opcode + "/" + cdw10 + " in the capture"));
    }

    private static Exchange fabrics(List<Exchange> ex, int fctype, int property) {
        return ex.stream()
                .filter(e -> e.opcode() == Sqe.OPC_FABRICS
                        && Sqe.fctype(e.cmd().sqe()) == fctype
                        && (property < 0 || Le.u32(e.cmd().sqe(), 44) == property))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no Fabrics command " + fctype + " in the capture"));
    }

    /** @return the sessions of a capture: admin queue first, then I/O queue 1 */
    private static List<Captures.Session> sessions(String capture) {
        List<Captures.Session> s = Captures.nvmet(capture);
        assertEquals(capture.equals(NvmetCapture.DISCOVERY) ? 1 : 2, s.size(), capture + ": connections");
        return s;
    }

    @ParameterizedTest
    @ValueSource(strings = {NvmetCapture.SESSION, NvmetCapture.DIGEST, NvmetCapture.DISCOVERY})
    void decodesAndReencodesEveryCapturedPduByteForByte(String capture) {
        int fromTarget = 0;
        for (Captures.Session s : sessions(capture)) {
            for (List<Captures.Frame> dir : List.of(s.toTarget(), s.fromTarget())) {
                for (Captures.Frame f : dir) {
                    Pdu p = PduCodec.decode(f.bytes(), f.settings(), Exchange.MAX_DATA);
                    boolean c2h = p.type() % 2 == 1
                            || p.type() == Pdu.R2T
                            || p.type() == Pdu.CAPSULE_RESP
                            || p.type() == Pdu.C2H_DATA;
                    assertEquals(f.fromTarget(), c2h, () -> "direction of " + p);
                    byte[] again = PduCodec.encode(p, f.settings());
                    assertArrayEquals(
                            f.bytes(),
                            again,
                            () -> capture + ": " + p + " re-encodes differently\n"
                                    + HexFormat.of().formatHex(f.bytes(), 0, Math.min(96, f.bytes().length)) + "\n"
                                    + HexFormat.of().formatHex(again, 0, Math.min(96, again.length)));
                    fromTarget += f.fromTarget() ? 1 : 0;
                }
            }
        }
        assertTrue(
                fromTarget >= (capture.equals(NvmetCapture.DISCOVERY) ? 8 : 20),
                capture + ": only " + fromTarget + " PDUs from the target");
    }

    @Test
    void capturesCoverEveryPduTypeTheTargetAndHostExchange() {
        Set<String> seen = new TreeSet<>();
        for (String c : List.of(NvmetCapture.SESSION, NvmetCapture.DIGEST, NvmetCapture.DISCOVERY)) {
            for (Captures.Session s : sessions(c)) {
                Exchange.decodeAll(s.toTarget()).forEach(p -> seen.add(Pdu.typeName(p.type())));
                Exchange.decodeAll(s.fromTarget()).forEach(p -> seen.add(Pdu.typeName(p.type())));
            }
        }
        assertEquals(
                new TreeSet<>(List.of("ICReq", "ICResp", "CapsuleCmd", "CapsuleResp", "H2CData", "C2HData", "R2T")),
                seen);
    }

    @ParameterizedTest
    @ValueSource(strings = {NvmetCapture.SESSION, NvmetCapture.DIGEST})
    void initializeConnectionNegotiatesDigestsAndMaxH2CData(String capture) {
        boolean digests = capture.equals(NvmetCapture.DIGEST);
        for (Captures.Session s : sessions(capture)) {
            Pdu.IcReq req = (Pdu.IcReq) PduCodec.decode(s.toTarget().get(0).bytes(), PduCodec.Settings.INITIAL, 0);
            Pdu.IcResp resp = (Pdu.IcResp) PduCodec.decode(s.fromTarget().get(0).bytes(), PduCodec.Settings.INITIAL, 0);
            assertEquals(new Pdu.IcReq(0, 0, digests, digests, 0), req);
            assertEquals(new Pdu.IcResp(0, 0, digests, digests, NVMET_MAXH2CDATA), resp);
            for (List<Captures.Frame> dir : List.of(s.toTarget(), s.fromTarget())) {
                for (Captures.Frame f : dir.subList(1, dir.size())) {
                    assertEquals(digests, (f.bytes()[1] & Pdu.FLAG_HDGST) != 0, "header digest flag");
                }
            }
        }
    }

    /** The kernel target's MAXH2CDATA (drivers/nvme/target/tcp.c NVMET_TCP_MAXH2CDATA). */
    private static final int NVMET_MAXH2CDATA = 0x400000;

    @Test
    void connectUsesZeroBasedSqsizeAndTheAdminControllerIdOnIoQueues() {
        int adminCntlid = -1;
        int connects = 0;
        for (Captures.Session s : sessions(NvmetCapture.SESSION)) {
            Exchange connect = exchanges(s).get(0);
            byte[] sqe = connect.cmd().sqe();
            assertEquals(Sqe.OPC_FABRICS, connect.opcode());
            assertEquals(Sqe.FCTYPE_CONNECT, Sqe.fctype(sqe));
            int qid = Le.u16(sqe, 42);
            byte[] data = connect.cmd().data();
            assertEquals(1024, data.length);
            assertEquals(NvmetCapture.NQN, Le.ascii(data, 256, 256));
            assertEquals(NvmetCapture.HOST_NQN, Le.ascii(data, 512, 256));
            assertTrue(connect.completion().ok(), connect.completion().toString());
            if (qid == 0) {
                assertEquals(31, Le.u16(sqe, 44), "admin queue: 32 entries, 0-based");
                assertEquals(10_000, Le.i32(sqe, 48), "KATO 10 s");
                assertEquals(0xffff, Le.u16(data, 16), "the admin Connect asks for a dynamic controller");
                adminCntlid = connect.completion().dw0() & 0xffff;
            } else {
                assertEquals(1, qid);
                assertEquals(31, Le.u16(sqe, 44), "I/O queue: the 32 entries asked for, 0-based");
                assertEquals(adminCntlid, Le.u16(data, 16), "I/O queues join the controller the admin Connect made");
            }
            connects++;
            byte[] mine = Sqe.connect(qid, Le.u16(sqe, 44), Le.i32(sqe, 48), false);
            Sqe.cid(mine, Sqe.cid(sqe));
            assertArrayEquals(sqe, mine);
            assertArrayEquals(
                    data,
                    Sqe.connectData(
                            Arrays.copyOf(data, 16), Le.u16(data, 16), NvmetCapture.NQN, NvmetCapture.HOST_NQN));
        }
        assertEquals(2, connects);
        assertTrue(adminCntlid > 0, "controller ID " + adminCntlid);
    }

    @Test
    void adminBringUpFollowsTheSpecificationAndDecodesIdentifyData() {
        List<Exchange> ex = exchanges(sessions(NvmetCapture.SESSION).get(0));
        // Property Get CAP (8 bytes): CSS has the NVM command set; MQES is what the I/O queues may ask for
        Exchange capGet = fabrics(ex, Sqe.FCTYPE_PROPERTY_GET, Sqe.PROP_CAP);
        byte[] capCmd = Sqe.propertyGet(Sqe.PROP_CAP, true);
        Sqe.cid(capCmd, Sqe.cid(capGet.cmd().sqe()));
        assertArrayEquals(capGet.cmd().sqe(), capCmd);
        long cap = capGet.completion().value64();
        assertEquals(1, cap >>> 37 & 1, "CSS: NVM command set");
        assertTrue((cap & 0xffff) >= 31, "MQES " + (cap & 0xffff));
        // Property Set CC.EN (IOSQES 6, IOCQES 4, MPS 0), and CC.SHN at shutdown
        List<Long> ccWrites = ex.stream()
                .filter(e -> e.opcode() == Sqe.OPC_FABRICS && Sqe.fctype(e.cmd().sqe()) == Sqe.FCTYPE_PROPERTY_SET)
                .map(e -> Le.i64(e.cmd().sqe(), 48))
                .toList();
        assertEquals(List.of(0x00460001L, 0x00464001L), ccWrites);
        // Identify Controller: one C2HData, then the CapsuleResp
        Exchange idc = find(ex, Sqe.OPC_IDENTIFY, Sqe.CNS_CONTROLLER);
        byte[] idCmd = Sqe.identify(Sqe.CNS_CONTROLLER, 0, 4096);
        Sqe.cid(idCmd, Sqe.cid(idc.cmd().sqe()));
        assertArrayEquals(idc.cmd().sqe(), idCmd);
        assertEquals(2, idc.replies().size());
        assertTrue(
                idc.replies().get(0) instanceof Pdu.C2HData d && d.last() && !d.success(),
                "C2HData marked last, without the SUCCESS flag");
        assertTrue(idc.replies().get(1) instanceof Pdu.CapsuleResp);
        ControllerInfo info = ControllerInfo.parse(idc.c2hData());
        assertEquals(NvmetCapture.NQN, info.subsystemNqn());
        assertEquals("Linux", info.model());
        assertFalse(info.serial().isEmpty());
        assertEquals(16384, info.inCapsuleDataBytes(), "the kernel's NVMe/TCP in-capsule data size");
        // Number of Queues: asked for 1, granted at least 1
        Exchange nq = find(ex, Sqe.OPC_SET_FEATURES, Sqe.FID_NUMBER_OF_QUEUES);
        assertEquals(0, Sqe.cdw(nq.cmd().sqe(), 11));
        assertTrue(nq.completion().ok());
        // Active namespace list: namespaces 1 and 2; Identify Namespace 1: 1 GiB of 512-byte blocks
        Exchange list = find(ex, Sqe.OPC_IDENTIFY, Sqe.CNS_ACTIVE_NS_LIST);
        assertEquals(
                List.of(1, 2, 0),
                List.of(Le.i32(list.c2hData(), 0), Le.i32(list.c2hData(), 4), Le.i32(list.c2hData(), 8)));
        Exchange idns = find(ex, Sqe.OPC_IDENTIFY, Sqe.CNS_NAMESPACE);
        assertEquals(1, Sqe.nsid(idns.cmd().sqe()));
        NamespaceInfo ns = NamespaceInfo.parse(1, idns.c2hData());
        assertEquals(512, ns.blockSize());
        assertEquals(1L << 30, ns.bytes());
        // Asynchronous Event Requests: sent after bring-up, outstanding until the shutdown aborts them
        List<Exchange> aers =
                ex.stream().filter(e -> e.opcode() == Sqe.OPC_ASYNC_EVENT).toList();
        assertFalse(aers.isEmpty());
        for (Exchange a : aers) {
            byte[] aerCmd = Sqe.asyncEventRequest();
            Sqe.cid(aerCmd, Sqe.cid(a.cmd().sqe()));
            assertArrayEquals(a.cmd().sqe(), aerCmd);
            assertFalse(a.completion().ok(), "an event arrived: " + a.completion());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {NvmetCapture.SESSION, NvmetCapture.DIGEST})
    void ioQueueWritesInCapsuleOrThroughR2TAndReadsBackTheSameBytes(String capture) {
        List<Exchange> ex = exchanges(sessions(capture).get(1));
        Map<Long, byte[]> written = new HashMap<>();
        Map<Long, byte[]> read = new HashMap<>();
        int inCapsule = 0;
        int r2t = 0;
        for (Exchange e : ex.subList(1, ex.size())) {
            byte[] sqe = e.cmd().sqe();
            assertTrue(e.completion().ok(), e.completion().toString());
            if (e.opcode() == Sqe.OPC_FLUSH) {
                continue;
            }
            int blocks = (Sqe.cdw(sqe, 12) & 0xffff) + 1;
            long slba = Le.i64(sqe, 40);
            int len = blocks * 512;
            byte[] mine = Sqe.readWrite(e.opcode() == Sqe.OPC_WRITE, 1, slba, blocks);
            Sqe.cid(mine, Sqe.cid(sqe));
            if (e.opcode() == Sqe.OPC_WRITE && Sqe.sglIdentifier(sqe) == Sqe.SGL_DATA_BLOCK_OFFSET) {
                Sqe.inCapsule(mine, len);
                written.put(slba, e.cmd().data());
                inCapsule++;
            } else if (e.opcode() == Sqe.OPC_WRITE) {
                Sqe.transportData(mine, len);
                assertEquals(0, e.cmd().data().length);
                Pdu.R2T ask = (Pdu.R2T) e.replies().get(0);
                assertEquals(0, ask.r2to());
                assertEquals(len, ask.r2tl(), "one R2T for the whole write");
                assertTrue(len > 16384, "only writes beyond the in-capsule size wait for an R2T");
                r2t++;
            } else {
                assertEquals(Sqe.OPC_READ, e.opcode());
                Sqe.transportData(mine, len);
                assertTrue(e.replies().getLast() instanceof Pdu.CapsuleResp, "reads end with a CapsuleResp");
                Pdu.C2HData last = (Pdu.C2HData) e.replies().get(e.replies().size() - 2);
                assertTrue(last.last() && !last.success(), "the last C2HData has LAST_PDU, not SUCCESS");
                read.put(slba, e.c2hData());
            }
            assertArrayEquals(sqe, mine);
        }
        // The H2CData that answers each R2T carries exactly the requested range, in one LAST piece.
        List<Pdu.R2T> r2ts = Exchange.decodeAll(sessions(capture).get(1).fromTarget()).stream()
                .filter(p -> p instanceof Pdu.R2T)
                .map(p -> (Pdu.R2T) p)
                .toList();
        List<Pdu.H2CData> h2c = Exchange.decodeAll(sessions(capture).get(1).toTarget()).stream()
                .filter(p -> p instanceof Pdu.H2CData)
                .map(p -> (Pdu.H2CData) p)
                .toList();
        assertEquals(r2ts.size(), h2c.size());
        for (int i = 0; i < r2ts.size(); i++) {
            assertEquals(r2ts.get(i).ttag(), h2c.get(i).ttag());
            assertEquals(r2ts.get(i).cccid(), h2c.get(i).cccid());
            assertEquals(r2ts.get(i).r2tl(), h2c.get(i).data().length);
            assertTrue(h2c.get(i).last());
            written.put(-1L - i, h2c.get(i).data());
        }
        assertEquals(1, inCapsule);
        assertEquals(1, r2t);
        // What was written is the known pattern, and the kernel target returned exactly it
        for (int[] w : NvmetCapture.WRITES) {
            byte[] expected = NvmetCapture.pattern(w[0], w[1]);
            assertArrayEquals(expected, read.get((long) w[0]), "read-back of LBA " + w[0]);
            assertTrue(written.values().stream().anyMatch(d -> Arrays.equals(d, expected)), "write of LBA " + w[0]);
        }
    }

    @Test
    void discoveryReadsTheWholeLogWithTwoEntries() {
        List<Exchange> ex = exchanges(sessions(NvmetCapture.DISCOVERY).get(0));
        assertEquals(DISCOVERY_NQN, Le.ascii(ex.get(0).cmd().data(), 256, 256));
        List<Exchange> logs =
                ex.stream().filter(e -> e.opcode() == Sqe.OPC_GET_LOG_PAGE).toList();
        assertFalse(logs.isEmpty());
        Exchange whole = logs.stream()
                .max((a, b) -> Integer.compare(a.c2hData().length, b.c2hData().length))
                .orElseThrow();
        int len = whole.c2hData().length;
        byte[] mine = Sqe.getLogPage(Sqe.LID_DISCOVERY, 0, 0, len);
        Sqe.cid(mine, Sqe.cid(whole.cmd().sqe()));
        assertArrayEquals(whole.cmd().sqe(), mine);
        DiscoveryLog d = DiscoveryLog.parse(whole.c2hData());
        assertEquals(2, d.entries().size(), d.entries().toString());
        for (DiscoveryLog.Entry e : d.entries()) {
            assertEquals("tcp", e.transportName());
            assertEquals("ipv4", e.addressFamilyName());
            assertEquals("10.0.2.15", e.address(), "the guest's address: the target does not know it is forwarded");
            assertEquals("4420", e.serviceId());
        }
        assertTrue(
                d.entries().stream()
                        .anyMatch(e -> e.subsystemNqn().equals(NvmetCapture.NQN)
                                && e.subsystemTypeName().equals("nvme")),
                d.entries().toString());
        assertTrue(
                d.entries().stream().anyMatch(e -> e.subsystemNqn().equals(DISCOVERY_NQN)),
                d.entries().toString());
    }
}
