/**
 * The verbs API as owned Java objects: devices, contexts, protection domains, memory regions, completion queues, queue
 * pairs (RC, UD), shared receive queues, address handles, pre-built work requests, and the QpInfo / connectRc helpers.
 */
package io.rdma4j.ibverbs;
