/**
 * RL weight sync on the transfer engine: tensor sets (host, device or {@code .safetensors} memory), a publisher per
 * trainer rank and subscribers per rollout rank, resharding, relayed fan-out and atomic versions.
 */
package io.rdma4j.weights;
