package io.rdma4j.engine.spi;

/**
 * How a progress thread with nothing to poll for sleeps in the kernel instead of parking blind: it wakes when one of
 * its lanes may have work (a completion, or on a software provider a peer's bytes that only move while someone polls),
 * when {@link #wake()} is called, or when the time is up. One thread waits; any thread wakes.
 *
 * <p>A backend returns one from {@link EngineBackend#idleWait(int[])} only where its lanes can announce work; the
 * engine then sleeps longer between polls without slowing peers that stream into it.
 */
public interface IdleWait extends AutoCloseable {
    /**
     * Sleeps for up to {@code nanos}, less when a lane may have work or {@link #wake()} was called since the last wait.
     * Returns at once when a lane holds work the kernel will not announce (poll it first).
     *
     * @return true when it ended early (a lane may have work, or a wake), false when the time ran out: a target whose
     *     peers stream into it learns that they do, though its polls find no completion for their writes
     */
    boolean await(long nanos);

    /**
     * Whether everything that could give the waiting thread work while it has none of its own in flight ends the wait:
     * a completion channel over hardware that moves its peers' writes and reads without this side polling. Such a
     * thread then sleeps up to the engine's quiet cap (20 ms) instead of waking every millisecond. False by default: a
     * software provider may need polls the kernel does not ask for.
     */
    default boolean announcesAll() {
        return false;
    }

    /** Ends the current or next {@link #await} at once; from any thread, also after {@link #close()} (then a no-op). */
    void wake();

    /** Frees what the wait holds; called by the waiting thread once it has stopped waiting. */
    @Override
    void close();
}
