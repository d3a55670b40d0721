package io.rdma4j.ibverbs.engine;

import io.rdma4j.engine.spi.IdleWait;
import io.rdma4j.ffi.FdWaiter;

/**
 * The kernel wait of a progress thread over its lanes: each lane's completion queue is armed
 * ({@code ibv_req_notify_cq}) and the thread sleeps in {@code ppoll} on the lanes' completion channels and a wake-up
 * eventfd, until a completion arrives (a peer's notification, our own work's) or the time is up. A peer's plain RDMA
 * writes need nothing from this side, so an idle target sleeps instead of polling every 50 us.
 *
 * <p>The standard loop, spread over calls: a call that arms a lane does not sleep, because a completion that landed
 * between the thread's last poll and the arming announces nothing; the thread polls once more and sleeps on the next
 * call. A call that only armed returns false (no time slept, nothing announced), so the thread's backoff goes on
 * instead of starting over with spins and yields; one that took an event returns true (a lane has work) and arms that
 * lane again. Only the progress thread calls {@link #await}.
 */
final class VerbsIdleWait implements IdleWait {
    private final Lane[] lanes;
    private final boolean[] armed;
    private final FdWaiter waiter;

    VerbsIdleWait(Lane[] lanes) {
        this.lanes = lanes.clone();
        this.armed = new boolean[lanes.length];
        int[] fds = new int[lanes.length];
        for (int i = 0; i < lanes.length; i++) {
            fds[i] = lanes[i].channel.fd();
        }
        this.waiter = new FdWaiter(fds);
    }

    @Override
    public boolean await(long nanos) {
        boolean armedNow = false;
        boolean firedAny = false;
        for (int i = 0; i < lanes.length; i++) {
            Lane l = lanes[i];
            try {
                // the queue fired since it was armed: take its events, acknowledge them, arm it again below
                boolean fired = false;
                while (l.channel.getEvent(0) != null) {
                    fired = true;
                }
                if (fired) {
                    l.cq.ackEvents();
                    armed[i] = false;
                    firedAny = true;
                }
                if (!armed[i]) {
                    if (l.cq.requestNotify(false) != 0) {
                        return true; // not armed: poll rather than sleep past a completion
                    }
                    armed[i] = true;
                    armedNow = true;
                }
            } catch (RuntimeException e) {
                return true; // the lane's next poll reports its failure
            }
        }
        if (firedAny) {
            return true;
        }
        return !armedNow && waiter.await(nanos);
    }

    /**
     * True: every completion of these lanes' queues fires their channels, and the device moves peers' writes and reads
     * into our memory without this side polling.
     */
    @Override
    public boolean announcesAll() {
        return true;
    }

    @Override
    public void wake() {
        waiter.wake();
    }

    @Override
    public void close() {
        waiter.close();
    }
}
