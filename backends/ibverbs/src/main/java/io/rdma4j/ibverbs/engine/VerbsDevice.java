package io.rdma4j.ibverbs.engine;

import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_LINK_LAYER_ETHERNET;

import io.rdma4j.ibverbs.Context;
import io.rdma4j.ibverbs.PortAttr;
import io.rdma4j.ibverbs.ProtectionDomain;
import io.rdma4j.ibverbs.Verbs;

/**
 * One opened RDMA device shared by its lanes: the verbs context, its protection domain (every registration is made on
 * it), the port's attributes and the GID index RoCE addresses peers with.
 */
final class VerbsDevice {
    /** The port every lane uses. */
    static final int PORT = 1;

    final int index;
    final Context ctx;
    final ProtectionDomain pd;
    final PortAttr port;
    /** RoCE v2 IPv4 GID index on Ethernet, -1 on InfiniBand (LID addressing). */
    final int gidIndex;

    private VerbsDevice(int index, Context ctx) {
        this.index = index;
        this.ctx = ctx;
        this.pd = ctx.allocPd();
        this.port = ctx.queryPort(PORT);
        this.gidIndex = port.linkLayer() == IBV_LINK_LAYER_ETHERNET ? ctx.findRoceV2Ipv4GidIndex(PORT) : -1;
    }

    /** Opens device {@code name} as device number {@code index}; closes what it opened when a step fails. */
    static VerbsDevice open(int index, String name) {
        Context ctx = Verbs.openDevice(name);
        try {
            return new VerbsDevice(index, ctx);
        } catch (RuntimeException e) {
            ctx.close();
            throw e;
        }
    }

    /** The largest send and receive queue the device allows, capped at {@code queueDepth} and at least 4. */
    int queueDepth(int queueDepth) {
        return Math.max(4, Math.min(queueDepth, ctx.deviceAttr().maxQpWr()));
    }

    /** Link speed from the port's active width and speed codes (IBTA encodings); 0 when unknown. */
    static double gbps(PortAttr p) {
        int lanesCount = switch (p.activeWidth()) {
            case 1 -> 1;
            case 2 -> 4;
            case 4 -> 8;
            case 8 -> 12;
            case 16 -> 2;
            default -> 0;
        };
        double perLane = switch (p.activeSpeed()) {
            case 1 -> 2.5;
            case 2 -> 5;
            case 4, 8 -> 10;
            case 16 -> 14;
            case 32 -> 25;
            case 64 -> 50;
            case 128 -> 100;
            default -> 0;
        };
        return lanesCount * perLane;
    }

    void close() {
        ctx.close();
    }
}
