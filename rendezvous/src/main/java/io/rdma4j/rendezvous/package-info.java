/**
 * Rendezvous: peers find each other through a directory (embedded in the JVM or a standalone gRPC server) and trade
 * endpoints, buffer addresses and keys over the typed {@code rdma4j.v1} contract, authenticated and validated. Start
 * with {@link io.rdma4j.rendezvous.Rendezvous}; engines serve {@link io.rdma4j.rendezvous.HandshakeServer}.
 */
package io.rdma4j.rendezvous;
