package com.example.library;

import java.util.Objects;

/** A book; the word Book in this comment is not a reference. */
public record Book(String isbn, String title, int year) {

    public static final int FIRST_YEAR = 1450;

    public Book(String isbn, String title, int year) {
        this.isbn = Objects.requireNonNull(isbn);
        this.title = title;
        this.year = year;
    }

    public static Book of(String line) {
        String[] parts = line.split(";");
        return new Book(parse(parts[0]), parts[1].trim(), Integer.parseInt(parts[2].trim()));
    }

    /** parse normalises an ISBN; parseIsbn also checks it. */
    static String parse(String isbn) {
        return isbn.replace("-", "").trim();
    }

    static String parseIsbn(String isbn) {
        String digits = parse(isbn);
        if (digits.length() != 13) {
            throw new IllegalArgumentException("not an ISBN: " + isbn);
        }
        return digits;
    }

    public boolean isOld() {
        return year < FIRST_YEAR + 100;
    }
}
