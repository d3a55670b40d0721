package io.rdma4j.nvmeof.tcp;

import io.rdma4j.nvmeof.NvmeException;
import io.rdma4j.nvmeof.internal.Cqe;
import io.rdma4j.nvmeof.internal.FabricQueue.Data;
import io.rdma4j.nvmeof.internal.Sqe;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.CompletableFuture;
import java.util.zip.CRC32C;

/**
 * One command's reused state, indexed by its command identifier: the capsule's PDU header in a direct buffer, the
 * command's data view and progress. {@link CommandSlots} owns which command a slot holds: it fills the slot when it
 * starts a command and empties it on completion or failure. In between the fields have one writer each: the submitting
 * thread fills the slot before handing it on; {@link Receiver} alone moves {@link #received}, {@link #requested} and
 * {@link #lost}; {@link Sender} only reads the capsule and the data view.
 */
final class CommandSlot {
    /** Room for a capsule or data PDU header: 72-byte CapsuleCmd + digest, padded to the largest alignment (128). */
    static final int HEADER_ROOM = 256;

    final int cid;
    /** The capsule's PDU header (common header, SQE, digest, padding), little-endian. */
    final ByteBuffer capsule;
    /** The data digest of in-capsule data. */
    final ByteBuffer capsuleDigest;

    /** Holds a command; written under the table's lock, read by the sender without it to skip stale jobs. */
    volatile boolean busy;
    /** Counts the commands this slot held, so the sender drops an R2T answer meant for an earlier one. */
    volatile int generation;

    byte[] sqe;
    String what;
    CompletableFuture<Cqe> future;
    boolean timed;
    long deadline;
    MemorySegment segment;
    long offset;
    int length;
    boolean toController;
    boolean inCapsule;
    ByteBuffer view; // the command's data in the caller's memory (or in bounce)
    byte[] bounce; // a heap segment that is no byte[] view goes through this copy
    long received;
    /** Set when the caller freed the destination before its data arrived: the data was drained, the command fails. */
    NvmeException lost;
    /** Bytes the target asked for by R2T so far. */
    long requested;
    /**
     * Write calls in progress that carry this command's data (guarded by the {@link Sender}'s monitor): the JDK holds
     * the memory's arena for the length of the call, so the command completes only once none is left.
     */
    int writing;
    /** The completion that arrived while {@link #writing} was not 0 (guarded by the {@link Sender}'s monitor). */
    Cqe late;

    CommandSlot(int cid, ByteBuffer capsule, ByteBuffer capsuleDigest) {
        this.cid = cid;
        this.capsule = capsule;
        this.capsuleDigest = capsuleDigest;
    }

    String what() {
        return what != null ? what : Sqe.describe(sqe);
    }

    /**
     * Takes a command: fills the CID and SGL1 into {@code sqe} and builds its capsule header (and in-capsule data
     * digest) with {@code crc}.
     */
    void fill(
            byte[] sqe,
            Data data,
            String what,
            boolean timed,
            CompletableFuture<Cqe> future,
            long deadline,
            int inCapsuleLimit,
            PduCodec.Settings tx,
            CRC32C crc) {
        this.sqe = sqe;
        this.what = what;
        this.future = future;
        this.timed = timed;
        this.deadline = deadline;
        this.segment = data.segment();
        this.offset = data.offset();
        this.length = data.length();
        this.toController = data.toController();
        this.received = 0;
        this.requested = 0;
        this.bounce = null;
        this.view = null;
        this.inCapsule = false;
        Sqe.cid(sqe, cid);
        int inCapsuleLength = 0;
        if (data.length() > 0) {
            view = view(data);
            if (data.toController() && data.length() <= inCapsuleLimit) {
                Sqe.inCapsule(sqe, data.length());
                inCapsule = true;
                inCapsuleLength = data.length();
            } else {
                Sqe.transportData(sqe, data.length());
            }
        }
        ByteBuffer h = capsule;
        h.limit(h.capacity());
        h.put(8, sqe);
        PduCodec.finishHeader(h, Pdu.CAPSULE_CMD, 0, inCapsuleLength, tx, crc);
        if (inCapsuleLength > 0 && tx.dataDigest()) {
            capsuleDigest.putInt(0, PduCodec.crc32c(crc, view.clear()));
        }
    }

    /** A byte-buffer view of the command's data; heap segments other than byte[] go through a bounce array. */
    private ByteBuffer view(Data data) {
        MemorySegment part = data.segment().asSlice(data.offset(), data.length());
        try {
            return part.asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
        } catch (UnsupportedOperationException e) {
            bounce = new byte[data.length()];
            if (data.toController()) {
                MemorySegment.copy(part, 0, MemorySegment.ofArray(bounce), 0, data.length());
            }
            return ByteBuffer.wrap(bounce);
        }
    }

    /** Copies bounced read data home and drops every reference to the completed command. */
    void empty() {
        if (bounce != null && !toController && lost == null) {
            MemorySegment.copy(MemorySegment.ofArray(bounce), 0, segment, offset, length);
        }
        abandon();
        lost = null;
        sqe = null;
        what = null;
    }

    /** Drops the command's future and memory, copying nothing; its name stays for a late error message. */
    void abandon() {
        future = null;
        view = null;
        bounce = null;
        segment = null;
    }

    /**
     * Puts the capsule's buffers (header, in-capsule data, data digest) into {@code into} from {@code at}.
     *
     * @return the next free index of {@code into}
     */
    int capsuleBuffers(ByteBuffer[] into, int at, boolean dataDigest) {
        ByteBuffer h = capsule;
        h.position(0).limit(h.getInt(4) - (inCapsule ? length + (dataDigest ? 4 : 0) : 0));
        into[at++] = h;
        if (inCapsule) {
            into[at++] = view.clear();
            if (dataDigest) {
                into[at++] = capsuleDigest.clear();
            }
        }
        return at;
    }
}
