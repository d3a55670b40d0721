package io.rdma4j.rendezvous;

import java.util.List;

/**
 * The answer to {@link HandshakeClient#connect}.
 *
 * @param initiator the caller's peer name
 * @param responder the responder's peer name
 * @param responderGeneration the responder's process generation: a different value than last time means it restarted
 *     and every earlier connection to it is gone
 * @param lanes the connected lane pairs
 * @param sessionToken proves this connection in {@link HandshakeClient#describe} calls
 */
public record HandshakeResult(
        String initiator, String responder, long responderGeneration, List<LanePairing> lanes, byte[] sessionToken) {
    public HandshakeResult {
        lanes = List.copyOf(lanes);
        sessionToken = sessionToken.clone();
    }

    @Override
    public byte[] sessionToken() {
        return sessionToken.clone();
    }
}
