package io.rdma4j.nvmeof.rdma;

import io.rdma4j.ibverbs.MemoryRegion;
import io.rdma4j.nvmeof.internal.Cqe;
import io.rdma4j.nvmeof.internal.FabricQueue.Data;
import io.rdma4j.nvmeof.internal.Sqe;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;

/**
 * One NVMe/RDMA command from submission to completion, and how its data reaches the target: staged in the capsule,
 * described by a keyed SGL over a registration of the caller's buffer, or copied through a registered bounce buffer
 * (heap memory, which the NIC cannot reach). It owns the bounce buffer and its registration, and releases them; the
 * caller's buffers stay registered in {@link RdmaResources}. Its slot in {@link RdmaSlots} decides when it goes out.
 */
final class RdmaRequest {
    final byte[] sqe;
    final Data data;
    final String what;
    final boolean timed;
    final CompletableFuture<Cqe> future = new CompletableFuture<>();
    int inCapsule; // bytes of data copied into the capsule slot
    MemorySegment bounce; // heap data staged in registered memory
    MemoryRegion bounceMr;
    int cid = -1;
    boolean sent;
    Cqe cqe;
    long deadline = Long.MAX_VALUE;

    RdmaRequest(byte[] sqe, Data data, String what, boolean timed) {
        this.sqe = sqe;
        this.data = data;
        this.what = what;
        this.timed = timed;
    }

    String what() {
        return what != null ? what : Sqe.describe(sqe);
    }

    /**
     * On the submitting thread: stages in-capsule data or describes the buffer by a keyed SGL.
     *
     * @param inCapsuleLimit writes up to this many bytes travel inside the capsule
     */
    void stage(int inCapsuleLimit, RdmaResources resources) {
        Data d = data;
        if (d.length() == 0) {
            // a null keyed descriptor, as Linux sends: nvmet-rdma refuses an all-zero SGL1 (type 0h, subtype 0h)
            Sqe.keyed(sqe, 0, 0, 0);
            return;
        }
        if (d.toController() && d.length() <= inCapsuleLimit) {
            inCapsule = d.length(); // copied into the capsule slot once the command has one
            Sqe.inCapsule(sqe, d.length());
            return;
        }
        MemorySegment seg = d.segment();
        if (seg.isNative()) {
            MemoryRegion mr = resources.region(seg);
            Sqe.keyed(sqe, seg.address() + d.offset(), d.length(), mr.rkey());
        } else {
            bounce = Arena.ofAuto()
                    .allocate(d.length(), 4096); // freed by the GC once the request and its registration are gone
            if (d.toController()) {
                MemorySegment.copy(seg, d.offset(), bounce, 0, d.length());
            }
            bounceMr = resources.registerOnce(bounce);
            Sqe.keyed(sqe, bounce.address(), d.length(), bounceMr.rkey());
        }
    }

    /** After a successful read through the bounce buffer: copies the data to the caller's memory. */
    void copyHome() {
        if (bounce != null && cqe.ok() && !data.toController()) {
            MemorySegment.copy(bounce, 0, data.segment(), data.offset(), data.length());
        }
    }

    /** Deregisters the bounce buffer, if any. Idempotent. */
    void unstage() {
        if (bounceMr != null) {
            try {
                bounceMr.close();
            } catch (RuntimeException ignored) {
                // deregistering a bounce buffer of a failed queue: the protection domain goes with the controller
            }
            bounceMr = null;
        }
    }
}
