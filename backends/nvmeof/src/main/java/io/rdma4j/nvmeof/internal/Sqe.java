package io.rdma4j.nvmeof.internal;

/**
 * NVMe submission queue entries (64 bytes) for the commands this host sends: admin, Fabrics and NVM I/O. Data pointers
 * are SGL descriptors (PSDT 01b), as NVMe over Fabrics requires.
 *
 * <pre>
 * bytes 0     opcode          1     flags (FUSE, PSDT bits 7:6)   2-3  CID
 *       4-7   NSID            8-23  reserved / metadata pointer
 *       24-39 SGL1 (address 8, length 4, reserved 3, identifier 1)
 *       40-63 CDW10..CDW15     (Fabrics: byte 4 is FCTYPE, bytes 40.. are command specific)
 * </pre>
 */
public final class Sqe {
    public static final int SIZE = 64;

    /** Admin opcodes. */
    public static final int OPC_GET_LOG_PAGE = 0x02,
            OPC_IDENTIFY = 0x06,
            OPC_SET_FEATURES = 0x09,
            OPC_GET_FEATURES = 0x0a,
            OPC_ASYNC_EVENT = 0x0c,
            OPC_KEEP_ALIVE = 0x18,
            OPC_FABRICS = 0x7f;
    /** NVM command set opcodes. */
    public static final int OPC_FLUSH = 0x00, OPC_WRITE = 0x01, OPC_READ = 0x02, OPC_WRITE_ZEROES = 0x08;
    /** Fabrics command types (FCTYPE, byte 4). */
    public static final int FCTYPE_PROPERTY_SET = 0x00, FCTYPE_CONNECT = 0x01, FCTYPE_PROPERTY_GET = 0x04;
    /** Controller properties. */
    public static final int PROP_CAP = 0x00, PROP_VS = 0x08, PROP_CC = 0x14, PROP_CSTS = 0x1c;
    /** Feature identifiers. */
    public static final int FID_NUMBER_OF_QUEUES = 0x07, FID_ASYNC_EVENT_CONFIG = 0x0b, FID_KEEP_ALIVE_TIMER = 0x0f;
    /** Identify CNS values. */
    public static final int CNS_NAMESPACE = 0x00,
            CNS_CONTROLLER = 0x01,
            CNS_ACTIVE_NS_LIST = 0x02,
            CNS_NS_DESCRIPTORS = 0x03;
    /** Log page identifiers. */
    public static final int LID_ERROR = 0x01, LID_CHANGED_NAMESPACES = 0x04, LID_DISCOVERY = 0x70;
    /** The broadcast NSID: every namespace, or the controller as a whole. */
    public static final long NSID_ALL = 0xffffffffL;
    /** SGL descriptor identifiers (type in bits 7:4, subtype in 3:0). */
    public static final int SGL_DATA_BLOCK_OFFSET = 0x01, SGL_TRANSPORT_DATA_BLOCK = 0x5a, SGL_KEYED_DATA_BLOCK = 0x40;
    /** FLAGS byte: PSDT = 01b, SGLs for the data. */
    public static final int FLAGS_SGL = 0x40;

    private Sqe() {}

    public static int opcode(byte[] sqe) {
        return Le.u8(sqe, 0);
    }

    public static int cid(byte[] sqe) {
        return Le.u16(sqe, 2);
    }

    public static void cid(byte[] sqe, int cid) {
        Le.put16(sqe, 2, cid);
    }

    public static long nsid(byte[] sqe) {
        return Le.u32(sqe, 4);
    }

    public static int fctype(byte[] sqe) {
        return Le.u8(sqe, 4);
    }

    public static long sglAddress(byte[] sqe) {
        return Le.i64(sqe, 24);
    }

    public static long sglLength(byte[] sqe) {
        return Le.u32(sqe, 32);
    }

    public static int sglIdentifier(byte[] sqe) {
        return Le.u8(sqe, 39);
    }

    /** @param n 10..15 */
    public static int cdw(byte[] sqe, int n) {
        return Le.i32(sqe, 40 + (n - 10) * 4);
    }

    private static byte[] base(int opcode, long nsid) {
        byte[] b = new byte[SIZE];
        b[0] = (byte) opcode;
        b[1] = (byte) FLAGS_SGL;
        Le.put32(b, 4, (int) nsid);
        return b;
    }

    private static void cdw(byte[] b, int n, int v) {
        Le.put32(b, 40 + (n - 10) * 4, v);
    }

    /** Points SGL1 at {@code length} bytes of in-capsule data at offset 0 (Data Block, Offset subtype). */
    public static void inCapsule(byte[] sqe, int length) {
        Le.put64(sqe, 24, 0);
        Le.put32(sqe, 32, length);
        sqe[39] = (byte) SGL_DATA_BLOCK_OFFSET;
    }

    /** Points SGL1 at {@code length} bytes moved by the transport (NVMe/TCP: R2T/H2CData or C2HData). */
    public static void transportData(byte[] sqe, int length) {
        Le.put64(sqe, 24, 0);
        Le.put32(sqe, 32, length);
        sqe[39] = (byte) SGL_TRANSPORT_DATA_BLOCK;
    }

    /** Keyed SGL data block (NVMe/RDMA): remote address, 24-bit length, 32-bit key. */
    public static void keyed(byte[] sqe, long address, int length, int rkey) {
        if (length < 0 || length > 0xffffff) {
            throw new IllegalArgumentException("a keyed SGL carries at most 16 MiB - 1, not " + length);
        }
        Le.put64(sqe, 24, address);
        sqe[32] = (byte) length;
        sqe[33] = (byte) (length >>> 8);
        sqe[34] = (byte) (length >>> 16);
        Le.put32(sqe, 35, rkey);
        sqe[39] = (byte) SGL_KEYED_DATA_BLOCK;
    }

    /** Fabrics Connect; the 1024-byte data ({@link #connectData}) goes in the capsule. */
    public static byte[] connect(int qid, int sqsize0, int kato, boolean disableSqFlowControl) {
        byte[] b = base(OPC_FABRICS, 0);
        b[4] = (byte) FCTYPE_CONNECT;
        Le.put16(b, 40, 0); // RECFMT
        Le.put16(b, 42, qid);
        Le.put16(b, 44, sqsize0);
        b[46] = (byte) (disableSqFlowControl ? 0x04 : 0); // CATTR bit 2: SQ flow control disable
        Le.put32(b, 48, kato);
        inCapsule(b, 1024);
        return b;
    }

    /** The Connect command's data: host identifier, controller ID, subsystem and host NQNs. */
    public static byte[] connectData(byte[] hostId, int cntlid, String subsystemNqn, String hostNqn) {
        if (hostId.length != 16) {
            throw new IllegalArgumentException("a host identifier is 16 bytes, not " + hostId.length);
        }
        byte[] d = new byte[1024];
        System.arraycopy(hostId, 0, d, 0, 16);
        Le.put16(d, 16, cntlid);
        Le.putAscii(d, 256, 256, subsystemNqn, "subsystem NQN");
        Le.putAscii(d, 512, 256, hostNqn, "host NQN");
        return d;
    }

    /** Property Get: {@code size8} selects an 8-byte property (CAP), else 4 bytes. */
    public static byte[] propertyGet(int offset, boolean size8) {
        byte[] b = base(OPC_FABRICS, 0);
        b[4] = (byte) FCTYPE_PROPERTY_GET;
        transportData(b, 0);
        b[40] = (byte) (size8 ? 1 : 0);
        Le.put32(b, 44, offset);
        return b;
    }

    public static byte[] propertySet(int offset, boolean size8, long value) {
        byte[] b = base(OPC_FABRICS, 0);
        b[4] = (byte) FCTYPE_PROPERTY_SET;
        transportData(b, 0);
        b[40] = (byte) (size8 ? 1 : 0);
        Le.put32(b, 44, offset);
        Le.put64(b, 48, value);
        return b;
    }

    public static byte[] identify(int cns, long nsid, int length) {
        byte[] b = base(OPC_IDENTIFY, nsid);
        transportData(b, length);
        cdw(b, 10, cns);
        return b;
    }

    /** Get Log Page of {@code length} bytes (a multiple of 4) from byte {@code offset} of log {@code lid}. */
    public static byte[] getLogPage(int lid, long nsid, long offset, int length) {
        if (length <= 0 || length % 4 != 0) {
            throw new IllegalArgumentException("a log page read is a positive multiple of 4 bytes, not " + length);
        }
        byte[] b = base(OPC_GET_LOG_PAGE, nsid);
        transportData(b, length);
        int numd = length / 4 - 1;
        cdw(b, 10, lid & 0xff | (numd & 0xffff) << 16);
        cdw(b, 11, numd >>> 16);
        cdw(b, 12, (int) offset);
        cdw(b, 13, (int) (offset >>> 32));
        return b;
    }

    public static byte[] setFeatures(int fid, int cdw11) {
        byte[] b = base(OPC_SET_FEATURES, 0);
        transportData(b, 0);
        cdw(b, 10, fid);
        cdw(b, 11, cdw11);
        return b;
    }

    public static byte[] getFeatures(int fid) {
        byte[] b = base(OPC_GET_FEATURES, 0);
        transportData(b, 0);
        cdw(b, 10, fid);
        return b;
    }

    public static byte[] keepAlive() {
        byte[] b = base(OPC_KEEP_ALIVE, 0);
        transportData(b, 0);
        return b;
    }

    public static byte[] asyncEventRequest() {
        byte[] b = base(OPC_ASYNC_EVENT, 0);
        transportData(b, 0);
        return b;
    }

    /**
     * Names a command for an error message, from its bytes: {@code Read(nsid=1, slba=8, blocks=8)} for I/O, else the
     * opcode. The data path passes no description and builds this only when something fails.
     */
    public static String describe(byte[] sqe) {
        int op = opcode(sqe);
        long nsid = nsid(sqe);
        long slba = Le.i64(sqe, 40);
        int blocks = (cdw(sqe, 12) & 0xffff) + 1;
        return switch (op) {
            case OPC_READ, OPC_WRITE, OPC_WRITE_ZEROES ->
                (op == OPC_READ ? "Read" : op == OPC_WRITE ? "Write" : "Write Zeroes") + "(nsid=" + nsid + ", slba="
                        + slba + ", blocks=" + blocks + ")";
            case OPC_FLUSH -> "Flush(nsid=" + nsid + ")";
            default -> String.format("command opcode 0x%02x (nsid=%d)", op, nsid);
        };
    }

    /** Read or Write of {@code blocks} logical blocks (1..65536) from {@code slba}; the caller sets SGL1. */
    public static byte[] readWrite(boolean write, long nsid, long slba, int blocks) {
        checkBlocks(blocks);
        byte[] b = base(write ? OPC_WRITE : OPC_READ, nsid);
        Le.put64(b, 40, slba);
        cdw(b, 12, blocks - 1);
        return b;
    }

    public static byte[] flush(long nsid) {
        byte[] b = base(OPC_FLUSH, nsid);
        transportData(b, 0);
        return b;
    }

    public static byte[] writeZeroes(long nsid, long slba, int blocks) {
        checkBlocks(blocks);
        byte[] b = base(OPC_WRITE_ZEROES, nsid);
        transportData(b, 0);
        Le.put64(b, 40, slba);
        cdw(b, 12, blocks - 1);
        return b;
    }

    private static void checkBlocks(int blocks) {
        if (blocks < 1 || blocks > 65536) {
            throw new IllegalArgumentException("one NVMe command moves 1..65536 logical blocks, not " + blocks);
        }
    }
}
