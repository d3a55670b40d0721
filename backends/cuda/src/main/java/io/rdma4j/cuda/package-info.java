/**
 * GPU memory for RDMA through the CUDA driver API: device discovery with PCI addresses, primary contexts, owned and
 * adopted {@link io.rdma4j.cuda.GpuBuffer}s, dma-buf export and GPUDirect RDMA ordering. {@link io.rdma4j.cuda.Cuda}
 * probes.
 */
package io.rdma4j.cuda;
