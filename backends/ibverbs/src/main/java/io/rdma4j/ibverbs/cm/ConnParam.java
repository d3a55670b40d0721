package io.rdma4j.ibverbs.cm;

import static io.rdma4j.ibverbs.ffi.RdmaCmaH.CONN_INITIATOR_DEPTH;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.CONN_PRIVATE_DATA;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.CONN_PRIVATE_DATA_LEN;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.CONN_RESPONDER_RESOURCES;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.CONN_RETRY_COUNT;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.CONN_RNR_RETRY_COUNT;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.RDMA_CONN_PARAM;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Connection parameters for {@code rdma_connect} / {@code rdma_accept} ({@code struct rdma_conn_param}).
 *
 * @param privateData bytes delivered to the peer's CONNECT_REQUEST / ESTABLISHED event (connect: at most 56, accept:
 *     196)
 * @param responderResources RDMA reads/atomics this side accepts in flight
 * @param initiatorDepth RDMA reads/atomics this side issues in flight
 * @param retryCount transport retries, 0-7
 * @param rnrRetryCount receiver-not-ready retries, 0-7 (7: infinite)
 */
public record ConnParam(
        byte[] privateData, int responderResources, int initiatorDepth, int retryCount, int rnrRetryCount) {
    public ConnParam {
        privateData = privateData == null ? new byte[0] : privateData.clone();
        for (int v : new int[] {responderResources, initiatorDepth}) {
            if (v < 0 || v > 255) {
                throw new IllegalArgumentException(
                        "responder_resources / initiator_depth must be in [0, 255], got " + v);
            }
        }
        if (retryCount < 0 || retryCount > 7 || rnrRetryCount < 0 || rnrRetryCount > 7) {
            throw new IllegalArgumentException(
                    "retry_count and rnr_retry_count must be in [0, 7], got " + retryCount + ", " + rnrRetryCount);
        }
    }

    /** Defaults: no private data, 1 outstanding read each way, 7 retries, infinite RNR retries. */
    public static ConnParam of(byte[] privateData) {
        return new ConnParam(privateData, 1, 1, 7, 7);
    }

    @Override
    public byte[] privateData() {
        return privateData.clone();
    }

    MemorySegment write(Arena a, int maxPrivateData, String call) {
        if (privateData.length > maxPrivateData) {
            throw new IllegalArgumentException(
                    call + " carries at most " + maxPrivateData + " bytes of private data, got " + privateData.length);
        }
        MemorySegment s = a.allocate(RDMA_CONN_PARAM);
        if (privateData.length > 0) {
            s.set(ValueLayout.ADDRESS, CONN_PRIVATE_DATA, a.allocateFrom(ValueLayout.JAVA_BYTE, privateData));
        }
        s.set(ValueLayout.JAVA_BYTE, CONN_PRIVATE_DATA_LEN, (byte) privateData.length);
        s.set(ValueLayout.JAVA_BYTE, CONN_RESPONDER_RESOURCES, (byte) responderResources);
        s.set(ValueLayout.JAVA_BYTE, CONN_INITIATOR_DEPTH, (byte) initiatorDepth);
        s.set(ValueLayout.JAVA_BYTE, CONN_RETRY_COUNT, (byte) retryCount);
        s.set(ValueLayout.JAVA_BYTE, CONN_RNR_RETRY_COUNT, (byte) rnrRetryCount);
        return s;
    }
}
