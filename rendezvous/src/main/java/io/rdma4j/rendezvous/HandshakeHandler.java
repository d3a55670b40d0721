package io.rdma4j.rendezvous;

import java.util.List;
import java.util.Optional;

/**
 * The engine's side of {@link HandshakeServer}: it owns endpoints and registrations, the server owns the protocol
 * (authentication, validation, idempotent retries, generations, access lists).
 *
 * <p>Calls for one initiator are serialized; calls for different initiators may run concurrently. Throwing
 * {@link IllegalArgumentException} answers {@code INVALID_ARGUMENT} (malformed endpoint bytes); a
 * {@link RendezvousException} answers its code; anything else answers {@code INTERNAL} with the message.
 */
public interface HandshakeHandler {
    /**
     * Connects local lanes to the initiator's lanes. Called once per distinct request: a retry of the same request
     * (same initiator, generation, lanes and lapse revision, while this peer's announcement stands: see
     * {@link HandshakeServer#renewSessions()}) gets the stored answer without calling this again.
     *
     * @param initiator the peer name of the caller
     * @param generation the caller's process generation
     * @param remoteLanes the caller's lanes (those of backends this version knows), with their endpoint bytes
     * @return for each remote lane to connect, the local lane (with local endpoint bytes) now connected to it
     */
    List<LanePairing> connect(String initiator, long generation, List<LaneInfo> remoteLanes);

    /**
     * Connects as {@link #connect(String, long, List)} does (which it calls unless overridden), from a caller that last
     * heard of its own lease lapsing at the directory's {@code lapseRevision} (0: never). The server calls this one.
     */
    default List<LanePairing> connect(
            String initiator, long generation, long lapseRevision, List<LaneInfo> remoteLanes) {
        return connect(initiator, generation, remoteLanes);
    }

    /**
     * @return the buffer named {@code name} with its keys (owner may be left empty), or empty when there is none; the
     *     server applies the buffer's access list
     */
    Optional<BufferInfo> describe(String name);

    /**
     * The initiator restarted (a higher generation arrived): drop what was connected for {@code previousGeneration}.
     * Called before {@link #connect} for the new generation.
     */
    default void peerRestarted(String initiator, long previousGeneration, long newGeneration) {}
}
