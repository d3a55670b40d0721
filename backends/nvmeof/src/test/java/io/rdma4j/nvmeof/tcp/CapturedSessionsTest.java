package io.rdma4j.nvmeof.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.ffi.Extended;
import io.rdma4j.nvmeof.ControllerInfo;
import io.rdma4j.nvmeof.DiscoveryLog;
import io.rdma4j.nvmeof.NamespaceInfo;
import io.rdma4j.nvmeof.internal.Cqe;
import io.rdma4j.nvmeof.internal.Le;
import io.rdma4j.nvmeof.internal.Sqe;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Golden bytes from SPDK: every PDU of SPDK's captures in ../shared/nvme-tcp-traces decodes, re-encodes to the same
 * bytes, and means what the trace shows. An extra check beside the project's own capture of the kernel target
 * ({@link NvmetCapturedSessionsTest}), which every clone runs; this one runs only where ../shared is present.
 */
@Extended
class CapturedSessionsTest {
    private static final String CNODE1 = "nqn.2016-06.io.spdk:cnode1";

    /** A command as sent, and what came back for it (data PDUs and the completion). */
    /**
     * Pairs commands with their replies. The captured initiator keeps one admin command outstanding at a time (the
     * Asynchronous Event Requests aside, which never complete here), so completions arrive in command order.
     */
    private static List<Exchange> exchanges(Captures.Session s) {
        List<Pdu> out = Exchange.decodeAll(s.toTarget());
        List<Pdu> in = Exchange.decodeAll(s.fromTarget());
        List<Pdu.CapsuleCmd> cmds = out.stream()
                .filter(p -> p instanceof Pdu.CapsuleCmd)
                .map(p -> (Pdu.CapsuleCmd) p)
                .filter(c -> Sqe.opcode(c.sqe()) != Sqe.OPC_ASYNC_EVENT || Sqe.fctype(c.sqe()) != 0 && false)
                .toList();
        List<Exchange> ex = new ArrayList<>();
        List<Pdu> pending = new ArrayList<>();
        int next = 0;
        for (Pdu p : in.subList(1, in.size())) {
            pending.add(p);
            Cqe done = switch (p) {
                case Pdu.CapsuleResp r -> Cqe.parse(r.cqe());
                case Pdu.C2HData d when d.success() -> Cqe.success(d.cccid());
                default -> null;
            };
            if (done != null) {
                Pdu.CapsuleCmd c = cmds.get(next++);
                assertEquals(Sqe.cid(c.sqe()), done.cid(), "completion order in the capture");
                ex.add(new Exchange(c, List.copyOf(pending), done));
                pending.clear();
            }
        }
        assertTrue(pending.isEmpty(), "replies left without a completion: " + pending);
        return ex;
    }

    @ParameterizedTest
    @ValueSource(strings = {Captures.SESSION, Captures.DIGEST, Captures.DISCOVERY})
    void decodesAndReencodesEveryCapturedPduByteForByte(String capture) {
        int n = 0;
        for (Captures.Session s : Captures.sessions(capture)) {
            for (List<Captures.Frame> dir : List.of(s.toTarget(), s.fromTarget())) {
                for (Captures.Frame f : dir) {
                    Pdu p = PduCodec.decode(f.bytes(), f.settings(), Exchange.MAX_DATA);
                    assertTrue(
                            f.fromTarget()
                                    == (p.type() % 2 == 1
                                            || p.type() == Pdu.R2T
                                            || p.type() == Pdu.CAPSULE_RESP
                                            || p.type() == Pdu.C2H_DATA),
                            "direction of " + p);
                    byte[] again = PduCodec.encode(p, f.settings());
                    assertArrayEquals(
                            f.bytes(),
                            again,
                            () -> capture + ": " + p + " re-encodes differently\n"
                                    + HexFormat.of().formatHex(f.bytes(), 0, Math.min(96, f.bytes().length)) + "\n"
                                    + HexFormat.of().formatHex(again, 0, Math.min(96, again.length)));
                    n++;
                }
            }
        }
        assertTrue(n > 40, capture + " yielded only " + n + " PDUs");
    }

    @Test
    void capturesCoverEveryPduTypeTheTargetAndHostExchange() {
        Set<String> seen = new TreeSet<>();
        for (String c : List.of(Captures.SESSION, Captures.DIGEST, Captures.DISCOVERY)) {
            for (Captures.Session s : Captures.sessions(c)) {
                Exchange.decodeAll(s.toTarget()).forEach(p -> seen.add(Pdu.typeName(p.type())));
                Exchange.decodeAll(s.fromTarget()).forEach(p -> seen.add(Pdu.typeName(p.type())));
            }
        }
        assertEquals(
                new TreeSet<>(List.of("ICReq", "ICResp", "CapsuleCmd", "CapsuleResp", "H2CData", "C2HData", "R2T")),
                seen);
    }

    @Test
    void initializeConnectionNegotiatesDigestsAndMaxH2CData() {
        for (String c : List.of(Captures.SESSION, Captures.DIGEST)) {
            boolean digests = c.equals(Captures.DIGEST);
            for (Captures.Session s : Captures.sessions(c)) {
                Pdu.IcReq req = (Pdu.IcReq) PduCodec.decode(s.toTarget().get(0).bytes(), PduCodec.Settings.INITIAL, 0);
                Pdu.IcResp resp =
                        (Pdu.IcResp) PduCodec.decode(s.fromTarget().get(0).bytes(), PduCodec.Settings.INITIAL, 0);
                assertEquals(new Pdu.IcReq(0, 0, digests, digests, 0), req);
                assertEquals(new Pdu.IcResp(0, 0, digests, digests, 131072), resp);
                // Every later PDU carries the header digest flag exactly when digests were negotiated.
                for (Captures.Frame f : s.toTarget().subList(1, s.toTarget().size())) {
                    assertEquals(digests, (f.bytes()[1] & Pdu.FLAG_HDGST) != 0);
                }
            }
        }
    }

    @Test
    void connectUsesZeroBasedSqsizeAndTheAdminControllerIdOnIoQueues() {
        List<Captures.Session> sessions = Captures.sessions(Captures.SESSION);
        int adminCntlid = -1;
        int connects = 0;
        for (Captures.Session s : sessions) {
            Exchange connect = exchanges(s).get(0);
            byte[] sqe = connect.cmd().sqe();
            assertEquals(Sqe.OPC_FABRICS, connect.opcode());
            assertEquals(Sqe.FCTYPE_CONNECT, Sqe.fctype(sqe));
            int qid = Le.u16(sqe, 42);
            int sqsize = Le.u16(sqe, 44);
            byte[] data = connect.cmd().data();
            assertEquals(1024, data.length);
            assertEquals(CNODE1, Le.ascii(data, 256, 256));
            assertFalse(Arrays.equals(new byte[16], Arrays.copyOf(data, 16)), "the host identifier is set");
            assertTrue(connect.completion().ok());
            if (qid == 0) {
                assertEquals(0x1f, sqsize, "admin queue: 32 entries, 0-based");
                assertEquals(0xffff, Le.u16(data, 16), "the admin Connect asks for a dynamic controller");
                adminCntlid = connect.completion().dw0() & 0xffff;
            } else {
                assertEquals(0x7f, sqsize, "I/O queue: 128 entries, 0-based");
                assertEquals(
                        adminCntlid,
                        Le.u16(data, 16),
                        "I/O queues connect to the controller the admin Connect created");
                assertEquals(adminCntlid, connect.completion().dw0() & 0xffff);
            }
            connects++;
            // The encoder builds the same command and data from the same inputs.
            byte[] mine = Sqe.connect(qid, sqsize, Le.i32(sqe, 48), false);
            Sqe.cid(mine, Sqe.cid(sqe));
            assertArrayEquals(sqe, mine);
            byte[] hostId = Arrays.copyOf(data, 16);
            assertArrayEquals(data, Sqe.connectData(hostId, Le.u16(data, 16), CNODE1, Le.ascii(data, 512, 256)));
        }
        assertEquals(4, connects);
        assertTrue(adminCntlid > 0);
    }

    @Test
    void adminBringUpFollowsTheSpecificationAndDecodesIdentifyData() {
        Captures.Session admin = Captures.sessions(Captures.SESSION).get(0);
        List<Exchange> ex = exchanges(admin);
        // Property Get CAP: MQES 127 (0-based), CQR, TO 15 s, CSS NVM
        Exchange capGet = ex.stream()
                .filter(e -> e.opcode() == Sqe.OPC_FABRICS
                        && Sqe.fctype(e.cmd().sqe()) == Sqe.FCTYPE_PROPERTY_GET
                        && Le.u32(e.cmd().sqe(), 44) == Sqe.PROP_CAP)
                .findFirst()
                .orElseThrow();
        long cap = capGet.completion().value64();
        assertEquals(127, cap & 0xffff);
        assertEquals(0x1e, cap >>> 24 & 0xff);
        assertEquals(1, cap >>> 37 & 1, "CSS: NVM command set");
        byte[] capCmd = Sqe.propertyGet(Sqe.PROP_CAP, true);
        Sqe.cid(capCmd, Sqe.cid(capGet.cmd().sqe()));
        assertArrayEquals(capGet.cmd().sqe(), capCmd);
        // Property Set CC.EN with IOSQES 6, IOCQES 4; later CC.SHN = 01b
        List<Long> ccWrites = ex.stream()
                .filter(e -> e.opcode() == Sqe.OPC_FABRICS && Sqe.fctype(e.cmd().sqe()) == Sqe.FCTYPE_PROPERTY_SET)
                .map(e -> Le.i64(e.cmd().sqe(), 48))
                .toList();
        assertEquals(List.of(0x00460001L, 0x00464001L), ccWrites);
        byte[] setCc = Sqe.propertySet(Sqe.PROP_CC, false, 0x00460001L);
        Exchange ccSet = ex.stream()
                .filter(e -> e.opcode() == Sqe.OPC_FABRICS && Sqe.fctype(e.cmd().sqe()) == Sqe.FCTYPE_PROPERTY_SET)
                .findFirst()
                .orElseThrow();
        Sqe.cid(setCc, Sqe.cid(ccSet.cmd().sqe()));
        assertArrayEquals(ccSet.cmd().sqe(), setCc);
        // Identify Controller: MDTS 5 (128 KiB with 4 KiB pages), in-capsule data 4096 bytes
        Exchange idc = ex.stream()
                .filter(e -> e.opcode() == Sqe.OPC_IDENTIFY && Sqe.cdw(e.cmd().sqe(), 10) == Sqe.CNS_CONTROLLER)
                .findFirst()
                .orElseThrow();
        byte[] idCmd = Sqe.identify(Sqe.CNS_CONTROLLER, 0, 4096);
        Sqe.cid(idCmd, Sqe.cid(idc.cmd().sqe()));
        assertArrayEquals(idc.cmd().sqe(), idCmd);
        assertTrue(
                idc.replies().get(0) instanceof Pdu.C2HData d && d.last() && d.success(),
                "one C2HData, completed by its SUCCESS flag");
        ControllerInfo info = ControllerInfo.parse(idc.c2hData());
        assertEquals(CNODE1, info.subsystemNqn());
        assertEquals(128 * 1024, info.maxTransferBytes(4096));
        assertEquals(4096, info.inCapsuleDataBytes());
        assertFalse(info.model().isEmpty());
        // Set Features Number of Queues: asks 1024/1024 (0-based 1023), gets 127/127
        Exchange nq = ex.stream()
                .filter(e ->
                        e.opcode() == Sqe.OPC_SET_FEATURES && Sqe.cdw(e.cmd().sqe(), 10) == Sqe.FID_NUMBER_OF_QUEUES)
                .findFirst()
                .orElseThrow();
        assertEquals(0x03ff03ff, Sqe.cdw(nq.cmd().sqe(), 11));
        assertEquals(0x007e007e, nq.completion().dw0());
        byte[] nqCmd = Sqe.setFeatures(Sqe.FID_NUMBER_OF_QUEUES, 0x03ff03ff);
        Sqe.cid(nqCmd, Sqe.cid(nq.cmd().sqe()));
        Sqe.inCapsule(nqCmd, 0); // the captured initiator describes "no data" with an empty in-capsule SGL
        assertArrayEquals(nq.cmd().sqe(), nqCmd);
        // Active namespace list, then Identify Namespace 1: 1 GiB of 512-byte blocks
        Exchange list = ex.stream()
                .filter(e -> e.opcode() == Sqe.OPC_IDENTIFY && Sqe.cdw(e.cmd().sqe(), 10) == Sqe.CNS_ACTIVE_NS_LIST)
                .findFirst()
                .orElseThrow();
        assertEquals(1, Le.i32(list.c2hData(), 0));
        assertEquals(0, Le.i32(list.c2hData(), 4));
        Exchange idns = ex.stream()
                .filter(e -> e.opcode() == Sqe.OPC_IDENTIFY && Sqe.cdw(e.cmd().sqe(), 10) == Sqe.CNS_NAMESPACE)
                .findFirst()
                .orElseThrow();
        NamespaceInfo ns = NamespaceInfo.parse(1, idns.c2hData());
        assertEquals(512, ns.blockSize());
        assertEquals(1L << 30, ns.bytes());
        // Keep Alive and Get Features (keep alive timer 10 s)
        Exchange ka = ex.stream()
                .filter(e -> e.opcode() == Sqe.OPC_KEEP_ALIVE)
                .findFirst()
                .orElseThrow();
        byte[] kaCmd = Sqe.keepAlive();
        Sqe.cid(kaCmd, Sqe.cid(ka.cmd().sqe()));
        assertArrayEquals(ka.cmd().sqe(), kaCmd);
        Exchange kato = ex.stream()
                .filter(e -> e.opcode() == Sqe.OPC_GET_FEATURES)
                .findFirst()
                .orElseThrow();
        assertEquals(Sqe.FID_KEEP_ALIVE_TIMER, Sqe.cdw(kato.cmd().sqe(), 10));
        assertEquals(10000, kato.completion().dw0());
        // Async Event Requests are sent and stay outstanding
        List<Pdu> out = Exchange.decodeAll(admin.toTarget());
        byte[] aer = out.stream()
                .filter(p -> p instanceof Pdu.CapsuleCmd c && Sqe.opcode(c.sqe()) == Sqe.OPC_ASYNC_EVENT)
                .map(p -> ((Pdu.CapsuleCmd) p).sqe())
                .findFirst()
                .orElseThrow();
        byte[] aerCmd = Sqe.asyncEventRequest();
        Sqe.cid(aerCmd, Sqe.cid(aer));
        assertArrayEquals(aer, aerCmd);
    }

    @ParameterizedTest
    @ValueSource(strings = {Captures.SESSION, Captures.DIGEST})
    void ioQueuesWriteInCapsuleOrThroughR2TAndReadWithSuccessFlag(String capture) {
        int inCapsule = 0, r2tWrites = 0, reads = 0;
        for (Captures.Session s : Captures.sessions(capture)) {
            List<Exchange> ex = exchanges(s);
            if (Le.u16(ex.get(0).cmd().sqe(), 42) == 0) {
                continue;
            }
            for (Exchange e : ex.subList(1, ex.size())) {
                byte[] sqe = e.cmd().sqe();
                int blocks = (Sqe.cdw(sqe, 12) & 0xffff) + 1;
                long slba = Le.i64(sqe, 40);
                int len = blocks * 512;
                byte[] mine = Sqe.readWrite(e.opcode() == Sqe.OPC_WRITE, Sqe.nsid(sqe), slba, blocks);
                Sqe.cid(mine, Sqe.cid(sqe));
                assertEquals(len, Sqe.sglLength(sqe));
                if (e.opcode() == Sqe.OPC_WRITE && Sqe.sglIdentifier(sqe) == Sqe.SGL_DATA_BLOCK_OFFSET) {
                    assertEquals(len, e.cmd().data().length);
                    assertTrue(len <= 4096);
                    Sqe.inCapsule(mine, len);
                    inCapsule++;
                } else if (e.opcode() == Sqe.OPC_WRITE) {
                    assertEquals(0, e.cmd().data().length);
                    Pdu.R2T r2t = (Pdu.R2T) e.replies().get(0);
                    assertEquals(Sqe.cid(sqe), r2t.cccid());
                    assertEquals(0, r2t.r2to());
                    assertEquals(len, r2t.r2tl());
                    assertTrue(len > 4096 && len <= 131072);
                    Sqe.transportData(mine, len);
                    r2tWrites++;
                } else {
                    assertEquals(Sqe.OPC_READ, e.opcode());
                    Sqe.transportData(mine, len);
                    Pdu.C2HData last = (Pdu.C2HData) e.replies().getLast();
                    assertTrue(last.last() && last.success(), "reads complete by the SUCCESS flag, no CapsuleResp");
                    assertEquals(len, e.c2hData().length);
                    reads++;
                }
                assertArrayEquals(sqe, mine);
                assertTrue(e.completion().ok());
            }
            // The H2CData that answers each R2T carries exactly the requested range, in one LAST piece (below
            // MAXH2CDATA).
            List<Pdu> out = Exchange.decodeAll(s.toTarget());
            List<Pdu> in = Exchange.decodeAll(s.fromTarget());
            List<Pdu.R2T> r2ts = in.stream()
                    .filter(p -> p instanceof Pdu.R2T)
                    .map(p -> (Pdu.R2T) p)
                    .toList();
            List<Pdu.H2CData> h2c = out.stream()
                    .filter(p -> p instanceof Pdu.H2CData)
                    .map(p -> (Pdu.H2CData) p)
                    .toList();
            assertEquals(r2ts.size(), h2c.size());
            for (int i = 0; i < r2ts.size(); i++) {
                assertEquals(r2ts.get(i).ttag(), h2c.get(i).ttag());
                assertEquals(r2ts.get(i).cccid(), h2c.get(i).cccid());
                assertEquals(r2ts.get(i).r2tl(), h2c.get(i).data().length);
                assertTrue(h2c.get(i).last());
            }
        }
        assertTrue(r2tWrites > 0 && reads > 0, "writes through R2T " + r2tWrites + ", reads " + reads);
        if (capture.equals(Captures.SESSION)) {
            assertTrue(inCapsule > 0);
        }
    }

    @Test
    void discoveryReadsTheWholeLogWithTwoEntries() {
        List<Captures.Session> sessions = Captures.sessions(Captures.DISCOVERY);
        Exchange log = null;
        Captures.Session discovery = null;
        for (Captures.Session s : sessions) {
            for (Exchange e : exchanges(s)) {
                if (e.opcode() == Sqe.OPC_GET_LOG_PAGE && (Sqe.cdw(e.cmd().sqe(), 10) & 0xff) == Sqe.LID_DISCOVERY) {
                    log = e;
                    discovery = s;
                }
            }
        }
        assertTrue(log != null, "no discovery Get Log Page in the capture");
        assertEquals(
                "nqn.2014-08.org.nvmexpress.discovery",
                Le.ascii(exchanges(discovery).get(0).cmd().data(), 256, 256));
        byte[] mine = Sqe.getLogPage(Sqe.LID_DISCOVERY, 0, 0, 4096);
        Sqe.cid(mine, Sqe.cid(log.cmd().sqe()));
        assertArrayEquals(log.cmd().sqe(), mine);
        DiscoveryLog d = DiscoveryLog.parse(log.c2hData());
        assertEquals(2, d.entries().size());
        for (DiscoveryLog.Entry e : d.entries()) {
            assertEquals("tcp", e.transportName());
            assertEquals("ipv4", e.addressFamilyName());
            assertEquals("127.0.0.1", e.address());
            assertEquals("4420", e.serviceId());
        }
        assertTrue(
                d.entries().stream()
                        .anyMatch(e -> e.subsystemNqn().equals(CNODE1)
                                && e.subsystemTypeName().equals("nvme")),
                d.entries().toString());
    }
}
