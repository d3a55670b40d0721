/**
 * Conformance kits for the SPIs in {@code io.rdma4j.engine.spi}: abstract JUnit test classes that a backend's test
 * class extends, so every backend runs the same tests.
 */
package io.rdma4j.conformance;
