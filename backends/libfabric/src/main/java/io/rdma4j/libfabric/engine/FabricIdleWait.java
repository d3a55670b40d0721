package io.rdma4j.libfabric.engine;

import io.rdma4j.engine.spi.IdleWait;
import io.rdma4j.ffi.FdWaiter;

/**
 * The kernel wait of a progress thread over its tcp lanes: {@code fi_trywait} on every lane's completion queue, then
 * {@code ppoll} on their wait descriptors and a wake-up eventfd. A peer's bytes arriving on a lane's sockets make its
 * descriptor readable, so the thread polls (and moves them) as they come instead of after a blind park.
 */
final class FabricIdleWait implements IdleWait {
    private final FabricLane[] lanes;
    private final FdWaiter waiter;

    FabricIdleWait(FabricLane[] lanes) {
        this.lanes = lanes.clone();
        int[] fds = new int[lanes.length];
        for (int i = 0; i < lanes.length; i++) {
            fds[i] = lanes[i].waitFd();
        }
        this.waiter = new FdWaiter(fds);
    }

    @Override
    public boolean await(long nanos) {
        for (FabricLane l : lanes) {
            try {
                if (!l.tryWait()) {
                    return true; // work queued already, or the lane closed: the next poll sees it
                }
            } catch (RuntimeException e) {
                return true; // the lane's next poll reports its failure
            }
        }
        return waiter.await(nanos);
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
