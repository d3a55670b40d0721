/**
 * Not API: gRPC service implementations, validation of untrusted messages, conversions between the wire contract and
 * the public records, and transport plumbing (token interceptors, TLS).
 */
package io.rdma4j.rendezvous.internal;
