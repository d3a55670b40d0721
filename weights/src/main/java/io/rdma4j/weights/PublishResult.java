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
 * @param resent the subscribers whose pieces this rank sent a second time, directly, because they had not confirmed
 *     within a grace after its writes (slow, or a subscriber relaying to them failed); those bytes count in
 *     {@code publisherBytes} again. Empty in a version that sent every byte once
 */
public record PublishResult(
        long version, long nanos, long publisherBytes, long relayedBytes, List<Outcome> outcomes, List<String> resent) {
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
     * @param reason why, for anything but {@link Status#SYNCED}; for a subscriber synced only after its pieces were
     *     resent, why they were, else null
     */
    public record Outcome(String subscriber, Status status, String reason) {}

    /** Copies the outcomes and the subscribers resent to. */
    public PublishResult {
        outcomes = List.copyOf(outcomes);
        resent = List.copyOf(resent);
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
