package io.rdma4j.ffi;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a test class or method of the extended suite: tests whose inputs are the real-machine captures in
 * {@code ../shared} beside the project (or {@code $RDMA4J_SHARED}). On a bare clone they are skipped, one by one, with
 * a reason that {@code ./rdma4j test} counts; where {@code ../shared} is present a skip inside them is a failure, so
 * they can never vanish silently. Load captures inside test methods, never in {@code @BeforeAll} or static
 * initialisers: the skip decision is taken per test.
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Tag("extended")
@ExtendWith(ExtendedSuite.class)
public @interface Extended {}
