/**
 * rdma4j root package: the unchecked exception hierarchy shared by every module.
 */
package io.rdma4j;
