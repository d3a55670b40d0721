package io.rdma4j.engine.internal;

import io.rdma4j.engine.spi.BackendRegistration;
import io.rdma4j.engine.spi.EngineBackend;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.Arrays;

/**
 * Our side of the notification channel to one peer: a ring of {@code slots} records in the peer's inbox. A record goes
 * out only after every chunk of its transfer completed, and once on each lane that carried data, behind that lane's
 * chunks on the same connection, so the tag can never overtake its data even where a local completion does not yet mean
 * the bytes are placed (libfabric's manual progress).
 *
 * <p>Flow control needs no reverse path: sequence numbers below {@code consumed + slots} are free, and when they run
 * out we RDMA-read the peer's consumed counter (the word after its ring).
 *
 * <p>Neither does the CRC32C verdict: after its copies completed, a write with a CRC RDMA-reads its slot's verdict word
 * (after the counter, one per slot) until the peer wrote it for the write's sequence. The peer counts a slot consumed
 * only once its verdict word is written, and we hand a slot out again only once the verdict of the write before in it
 * was read (or that write ended otherwise), so a verdict is never overwritten before its writer saw it.
 */
final class OutChannel implements AutoCloseable {
    final int slots;
    final int inboxId;
    /** Per remote lane: address of the ring's slot 0 and the key. */
    final long[] remoteBase;

    final long[] remoteKey;
    /** The engine's lanes, indexed by lane: each copy goes to the progress thread of its lane. */
    private final LaneRuntime[] lanes;

    private final Arena arena = Arena.ofShared();
    private final MemorySegment outbox;
    private final BackendRegistration registration;
    private long nextSeq;
    private long consumed;
    private boolean creditReadInFlight;
    private final ArrayDeque<TransferImpl> waiting = new ArrayDeque<>();
    /** Per slot: the sequence of a write with a CRC whose verdict we have not read yet, or -1. */
    private final long[] unreadVerdict;

    OutChannel(
            EngineBackend backend, LaneRuntime[] lanes, int slots, int inboxId, long[] remoteBase, long[] remoteKey) {
        if (slots < 1 || slots > NotificationRecord.MAX_SLOTS) {
            throw new IllegalArgumentException("slots must be 1.." + NotificationRecord.MAX_SLOTS);
        }
        this.slots = slots;
        this.lanes = lanes;
        this.inboxId = inboxId;
        this.remoteBase = remoteBase;
        this.remoteKey = remoteKey;
        // the same shape as the peer's inbox: records we send, then where its counter and verdict words land
        this.outbox = arena.allocate(NotificationRecord.inboxBytes(slots), 64);
        this.unreadVerdict = new long[slots];
        Arrays.fill(unreadVerdict, -1);
        this.registration = backend.register(outbox);
    }

    /**
     * All data of {@code t} completed: take a sequence (or wait for credit) and hand one copy to each lane that carried
     * data.
     */
    void notify(TransferImpl t, LaneRuntime current, int remoteLane, int connection) {
        long seq;
        long mask = t.lanesMask();
        if (mask == 0) {
            mask = 1L << current.lane;
        }
        synchronized (this) {
            seq = t.notifySeq;
            if (seq < 0) {
                if (nextSeq >= consumed + slots) {
                    waiting.add(t);
                    requestCredit(current, remoteLane, connection);
                    return;
                }
                if (unreadVerdict[(int) (nextSeq % slots)] >= 0) {
                    waiting.add(t); // woken by verdictDone
                    return;
                }
                seq = nextSeq++;
                t.notifySeq = seq;
                if (t.crc) {
                    unreadVerdict[(int) (seq % slots)] = seq;
                }
                NotificationRecord.write(
                        slot(seq), seq, t.tag, t.targetGeneration, t.targetOffset, t.total, t.crc, t.crcValue, mask);
            }
        }
        t.copies(Long.bitCount(mask));
        for (long m = mask; m != 0; m &= m - 1) {
            int lane = Long.numberOfTrailingZeros(m);
            lanes[lane].owner.submit(new NotifyCopy(t, lane, lane, t.peer.remoteLane[lane], t.peer.connection[lane]));
        }
    }

    /** {@return the handle of our registered outbox, the local side of every post of this channel} */
    int handle() {
        return registration.handle();
    }

    /** {@return the ring slot of {@code t}'s record} */
    int slotOf(TransferImpl t) {
        return (int) (t.notifySeq % slots);
    }

    /** {@return where in our outbox {@code at} bytes from its start are (for the NIC)} */
    long localAddress(long at) {
        return registration.address() + at;
    }

    /** {@return where {@code at} bytes from the start of the peer's inbox are, through its lane {@code remoteLane}} */
    long remoteAddress(int remoteLane, long at) {
        return remoteBase[remoteLane] + at;
    }

    /** {@return the immediate that announces a copy of slot {@code slot} vouching for our lane {@code markLane}} */
    int immediate(int slot, int markLane) {
        return NotificationRecord.immediate(inboxId, slot, markLane);
    }

    /** {@return the verdict word last read for {@code t}'s slot (untrusted: the caller checks its sequence)} */
    long verdictWord(TransferImpl t) {
        long at = NotificationRecord.verdictOffset(slots, (int) (t.notifySeq % slots));
        return outbox.get(NotificationRecord.LONG, at);
    }

    /**
     * {@code t}'s verdict was read, or will not be (it ended otherwise): its slot may be handed out again, and the
     * notifications waiting for it try again on lane {@code l}.
     */
    void verdictDone(TransferImpl t, LaneRuntime l) {
        ArrayDeque<TransferImpl> again;
        synchronized (this) {
            int s = (int) (t.notifySeq % slots);
            if (t.notifySeq < 0 || unreadVerdict[s] != t.notifySeq) {
                return;
            }
            unreadVerdict[s] = -1;
            again = new ArrayDeque<>(waiting);
            waiting.clear();
        }
        for (TransferImpl w : again) {
            if (!w.isTerminal()) {
                notify(w, l, w.peer.remoteLane[l.lane], w.peer.connection[l.lane]);
            }
        }
    }

    private MemorySegment slot(long seq) {
        return outbox.asSlice((seq % slots) * NotificationRecord.SLOT_BYTES, NotificationRecord.SLOT_BYTES);
    }

    /** Caller holds the lock. */
    private void requestCredit(LaneRuntime l, int remoteLane, int connection) {
        if (creditReadInFlight) {
            return;
        }
        long at = NotificationRecord.consumedOffset(slots);
        int rc = l.owner.postCreditRead(
                l,
                this,
                remoteLane,
                connection,
                registration.handle(),
                registration.address() + at,
                remoteBase[remoteLane] + at,
                remoteKey[remoteLane]);
        if (rc == EngineBackend.OK) {
            creditReadInFlight = true;
        } else {
            l.creditRetry.add(this);
        }
    }

    /** Retries a credit read that could not be posted (called on the lane's thread). */
    void retryCredit(LaneRuntime l) {
        synchronized (this) {
            if (!waiting.isEmpty()) {
                TransferImpl t = waiting.peek();
                requestCredit(l, t.peer.remoteLane[l.lane], t.peer.connection[l.lane]);
            }
        }
    }

    /** The consumed counter arrived (or the read failed): notifications waiting for credit try again on this lane. */
    void creditRead(LaneRuntime l, boolean ok, int remoteLane, int connection) {
        ArrayDeque<TransferImpl> again;
        synchronized (this) {
            creditReadInFlight = false;
            if (ok) {
                long c = outbox.get(NotificationRecord.LONG, NotificationRecord.consumedOffset(slots));
                // the peer's counter is untrusted: it only moves forward and never past what we sent
                if (c > consumed && c <= nextSeq) {
                    consumed = c;
                }
            }
            again = new ArrayDeque<>(waiting);
            waiting.clear();
        }
        for (TransferImpl t : again) {
            if (!t.isTerminal()) {
                notify(t, l, remoteLane, connection);
            }
        }
    }

    @Override
    public void close() {
        registration.close();
        arena.close();
    }
}
