/**
 * Not API: the safetensors header parser, the planner, and the wire formats of manifests, plans and tags that
 * publishers and subscribers exchange.
 */
package io.rdma4j.weights.internal;
