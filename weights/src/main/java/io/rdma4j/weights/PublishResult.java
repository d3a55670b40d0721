package io.rdma4j.weights;

import java.util.List;

/**
 * What {@link WeightPublisher#publish(long)} did.
 *
 * @param version the version published
 * @param nanos from the call to the last subscriber's confirmation
 * @param publisherBytes bytes this rank wrote itself (relayed bytes not counted)
 * @param relayedBytes bytes subscribers forwarded onward for this rank
 * @param outcomes one per subscriber known at the call
 */
public record PublishResult(long version, long nanos, long publisherBytes, long relayedBytes, List<Outcome> outcomes) {
    /** How one subscriber fared. */
    public enum Status {
        /** Every byte it needs for the version landed, and it confirmed. */
        SYNCED,
        /** Its buffer for the version was still in use (an open {@link WeightSubscriber.Lease}); it keeps its last. */
        SKIPPED,
        /** It failed (gone, too slow, refused); it is dropped and rejoins at a later version. */
        FAILED
    }

    /**
     * @param subscriber its engine name
     * @param status what happened
     * @param reason why, for anything but {@link Status#SYNCED}
     */
    public record Outcome(String subscriber, Status status, String reason) {}

    /** Copies the outcomes. */
    public PublishResult {
        outcomes = List.copyOf(outcomes);
    }

    /** {@return the subscribers that failed} */
    public List<Outcome> failed() {
        return outcomes.stream().filter(o -> o.status() == Status.FAILED).toList();
    }

    /** {@return how many subscribers synced} */
    public int synced() {
        return (int) outcomes.stream().filter(o -> o.status() == Status.SYNCED).count();
    }
}
