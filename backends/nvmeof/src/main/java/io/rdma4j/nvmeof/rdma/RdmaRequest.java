package io.rdma4j.nvmeof.rdma;

import io.rdma4j.ibverbs.MemoryRegion;
import io.rdma4j.nvmeof.internal.Cqe;
import io.rdma4j.nvmeof.internal.FabricQueue.Data;
import io.rdma4j.nvmeof.internal.Sqe;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;

/**
 * One NVMe/RDMA command from submission to completion, and how its data reaches the target: described by a keyed SGL
 * over registered device memory (never copied by the CPU), staged in the capsule, described by a keyed SGL over a
 * registration of the caller's buffer, or copied through a registered bounce buffer from {@link RdmaResources}' pool
 * (heap memory, which the NIC cannot reach), which it gives back once the command completed, or drops when it failed;
 * the caller's buffers stay registered in {@link RdmaResources}. Its slot in {@link RdmaSlots} decides when it goes
 * out.
 */
final class RdmaRequest {
    final byte[] sqe;
    final Data data;
    final String what;
    final boolean timed;
    final CompletableFuture<Cqe> future = new CompletableFuture<>();
    int inCapsule; // bytes of data copied into the capsule slot
    RdmaResources.Bounce bounce; // heap data staged in registered memory
    private RdmaResources resources;
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
        MemorySegment seg = d.segment();
        MemoryRegion device = seg.isNative() ? resources.deviceRegion(seg.address() + d.offset(), d.length()) : null;
        if (device != null) {
            // registered device memory: the NIC moves it; the CPU must not touch it (no in-capsule copy)
            Sqe.keyed(sqe, seg.address() + d.offset(), d.length(), device.rkey());
            return;
        }
        if (d.toController() && d.length() <= inCapsuleLimit) {
            inCapsule = d.length(); // copied into the capsule slot once the command has one
            Sqe.inCapsule(sqe, d.length());
            return;
        }
        if (seg.isNative()) {
            MemoryRegion mr = resources.region(seg);
            Sqe.keyed(sqe, seg.address() + d.offset(), d.length(), mr.rkey());
        } else {
            this.resources = resources;
            bounce = resources.take(d.length());
            if (d.toController()) {
                MemorySegment.copy(seg, d.offset(), bounce.segment(), 0, d.length());
            }
            Sqe.keyed(sqe, bounce.segment().address(), d.length(), bounce.mr().rkey());
        }
    }

    /** After a successful read through the bounce buffer: copies the data to the caller's memory. */
    void copyHome() {
        if (bounce != null && cqe.ok() && !data.toController()) {
            MemorySegment.copy(bounce.segment(), 0, data.segment(), data.offset(), data.length());
        }
    }

    /** The command completed: its bounce buffer, if any, goes back to the pool. Idempotent. */
    void release() {
        if (bounce != null) {
            resources.give(bounce);
            bounce = null;
        }
    }

    /** The command failed or was never sent: its bounce buffer, if any, is deregistered. Idempotent. */
    void unstage() {
        if (bounce != null) {
            resources.drop(bounce);
            bounce = null;
        }
    }
}
