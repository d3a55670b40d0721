package io.rdma4j.ibverbs;

import io.rdma4j.ibverbs.ffi.VerbsH;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * One valid entry of a port's GID table ({@code struct ibv_gid_entry}).
 *
 * @param gidType {@code IBV_GID_TYPE_IB}, {@code IBV_GID_TYPE_ROCE_V1} or {@code IBV_GID_TYPE_ROCE_V2}
 * @param ndevIfindex the netdev index for RoCE GIDs
 */
public record GidEntry(int index, int port, int gidType, byte[] gid, int ndevIfindex) {
    public GidEntry {
        gid = gid.clone();
    }

    @Override
    public byte[] gid() {
        return gid.clone();
    }

    /** @return true for an IPv4-mapped GID ({@code ::ffff:a.b.c.d}), the kind RoCE v2 over IPv4 uses */
    public boolean isIpv4Mapped() {
        for (int i = 0; i < 10; i++) {
            if (gid[i] != 0) {
                return false;
            }
        }
        return gid[10] == (byte) 0xff && gid[11] == (byte) 0xff;
    }

    public boolean isRoceV2() {
        return gidType == VerbsH.IBV_GID_TYPE_ROCE_V2;
    }

    /** @return the GID as an IPv6 (or IPv4 for mapped ones) address */
    public InetAddress address() {
        try {
            return InetAddress.getByAddress(gid);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public String toString() {
        return "GID[" + index + "] port " + port + " " + (gidType == 2 ? "RoCEv2" : gidType == 1 ? "RoCEv1" : "IB")
                + " " + address().getHostAddress();
    }
}
