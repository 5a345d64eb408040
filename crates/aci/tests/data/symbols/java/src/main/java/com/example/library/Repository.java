package com.example.library;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.List;
import java.util.Optional;

/**
 * Storage of items by key.
 *
 * @param <K> the key type
 * @param <V> the item type
 */
public interface Repository<K, V> {

    /** Marks a repository whose changes are logged. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.TYPE)
    @interface Audited {}

    Optional<V> find(K key);

    List<V> findAll();

    void save(K key, V value);

    default boolean contains(K key) {
        return find(key).isPresent();
    }
}
