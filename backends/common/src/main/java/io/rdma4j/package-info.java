/**
 * rdma4j root package: the unchecked exception hierarchy shared by every module, rooted at
 * {@link io.rdma4j.Rdma4jException}.
 */
package io.rdma4j;
