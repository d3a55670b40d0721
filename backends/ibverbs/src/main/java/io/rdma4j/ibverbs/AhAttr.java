package io.rdma4j.ibverbs;

import static io.rdma4j.ffi.Structs.offset;

import io.rdma4j.ibverbs.ffi.VerbsH;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HexFormat;

/**
 * Address vector ({@code struct ibv_ah_attr} with its {@code ibv_global_route}): for RTR transitions and UD address
 * handles.
 */
public final class AhAttr {
    private static final long DLID = offset(VerbsH.IBV_AH_ATTR, "dlid");
    private static final long SL = offset(VerbsH.IBV_AH_ATTR, "sl");
    private static final long SRC_PATH_BITS = offset(VerbsH.IBV_AH_ATTR, "src_path_bits");
    private static final long STATIC_RATE = offset(VerbsH.IBV_AH_ATTR, "static_rate");
    private static final long IS_GLOBAL = offset(VerbsH.IBV_AH_ATTR, "is_global");
    private static final long PORT_NUM = offset(VerbsH.IBV_AH_ATTR, "port_num");
    private static final long DGID = offset(VerbsH.IBV_AH_ATTR, "grh.dgid");
    private static final long FLOW_LABEL = offset(VerbsH.IBV_AH_ATTR, "grh.flow_label");
    private static final long SGID_INDEX = offset(VerbsH.IBV_AH_ATTR, "grh.sgid_index");
    private static final long HOP_LIMIT = offset(VerbsH.IBV_AH_ATTR, "grh.hop_limit");
    private static final long TRAFFIC_CLASS = offset(VerbsH.IBV_AH_ATTR, "grh.traffic_class");

    private int dlid;
    private int sl;
    private int srcPathBits;
    private int staticRate;
    private int port = 1;
    private boolean global;
    private byte[] dgid = new byte[16];
    private int sgidIndex;
    private int hopLimit = 64;
    private int trafficClass;
    private int flowLabel;

    public AhAttr dlid(int lid) {
        this.dlid = check("dlid", lid, 0xFFFF);
        return this;
    }

    public AhAttr sl(int sl) {
        this.sl = check("sl", sl, 15);
        return this;
    }

    public AhAttr srcPathBits(int bits) {
        this.srcPathBits = check("src_path_bits", bits, 0x7F);
        return this;
    }

    public AhAttr staticRate(int rate) {
        this.staticRate = check("static_rate", rate, 0xFF);
        return this;
    }

    public AhAttr port(int port) {
        this.port = check("port_num", port, 0xFF);
        return this;
    }

    /**
     * Adds a global route header (needed on RoCE): destination GID, local GID index, hop limit, traffic class, flow
     * label.
     */
    public AhAttr global(byte[] dgid, int sgidIndex, int hopLimit, int trafficClass, int flowLabel) {
        if (dgid == null || dgid.length != 16) {
            throw new IllegalArgumentException("a GID is 16 bytes, got " + (dgid == null ? "null" : dgid.length));
        }
        this.global = true;
        this.dgid = dgid.clone();
        this.sgidIndex = check("sgid_index", sgidIndex, 0xFF);
        this.hopLimit = check("hop_limit", hopLimit, 0xFF);
        this.trafficClass = check("traffic_class", trafficClass, 0xFF);
        this.flowLabel = check("flow_label", flowLabel, 0xFFFFF);
        return this;
    }

    static int check(String name, int v, int max) {
        if (v < 0 || v > max) {
            throw new IllegalArgumentException(name + " must be in [0, " + max + "], got " + v);
        }
        return v;
    }

    void write(MemorySegment s, long base) {
        s.set(ValueLayout.JAVA_SHORT, base + DLID, (short) dlid);
        s.set(ValueLayout.JAVA_BYTE, base + SL, (byte) sl);
        s.set(ValueLayout.JAVA_BYTE, base + SRC_PATH_BITS, (byte) srcPathBits);
        s.set(ValueLayout.JAVA_BYTE, base + STATIC_RATE, (byte) staticRate);
        s.set(ValueLayout.JAVA_BYTE, base + IS_GLOBAL, (byte) (global ? 1 : 0));
        s.set(ValueLayout.JAVA_BYTE, base + PORT_NUM, (byte) port);
        if (global) {
            MemorySegment.copy(dgid, 0, s, ValueLayout.JAVA_BYTE, base + DGID, 16);
            s.set(ValueLayout.JAVA_INT, base + FLOW_LABEL, flowLabel);
            s.set(ValueLayout.JAVA_BYTE, base + SGID_INDEX, (byte) sgidIndex);
            s.set(ValueLayout.JAVA_BYTE, base + HOP_LIMIT, (byte) hopLimit);
            s.set(ValueLayout.JAVA_BYTE, base + TRAFFIC_CLASS, (byte) trafficClass);
        }
    }

    static AhAttr read(MemorySegment s, long base) {
        AhAttr a = new AhAttr();
        a.dlid = Short.toUnsignedInt(s.get(ValueLayout.JAVA_SHORT, base + DLID));
        a.sl = Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, base + SL));
        a.port = Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, base + PORT_NUM));
        a.global = s.get(ValueLayout.JAVA_BYTE, base + IS_GLOBAL) != 0;
        a.dgid = s.asSlice(base + DGID, 16).toArray(ValueLayout.JAVA_BYTE);
        a.sgidIndex = Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, base + SGID_INDEX));
        a.hopLimit = Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, base + HOP_LIMIT));
        a.trafficClass = Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, base + TRAFFIC_CLASS));
        return a;
    }

    public int dlid() {
        return dlid;
    }

    public int port() {
        return port;
    }

    public boolean isGlobal() {
        return global;
    }

    public byte[] dgid() {
        return dgid.clone();
    }

    public int sgidIndex() {
        return sgidIndex;
    }

    @Override
    public String toString() {
        return "ah_attr{dlid=" + dlid + ", port=" + port
                + (global
                        ? ", dgid=" + HexFormat.of().formatHex(dgid) + ", sgid_index=" + sgidIndex + ", hop_limit="
                                + hopLimit
                        : "")
                + "}";
    }
}
