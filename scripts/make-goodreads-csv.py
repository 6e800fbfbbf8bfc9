#!/usr/bin/env python3
"""Writes a Goodreads library export with N rows and every quirk of the real one:
UTF-8 BOM, CRLF, quoted fields with commas, doubled quotes and embedded newlines,
="0441013597" ISBN cells, YYYY/MM/DD dates, comma-joined shelves, rating 0 as unrated."""
import csv
import random
import sys

HEADER = ["Book Id", "Title", "Author", "Author l-f", "Additional Authors", "ISBN", "ISBN13",
          "My Rating", "Average Rating", "Publisher", "Binding", "Number of Pages", "Year Published",
          "Original Publication Year", "Date Read", "Date Added", "Bookshelves",
          "Bookshelves with positions", "Exclusive Shelf", "My Review", "Spoiler", "Private Notes",
          "Read Count", "Owned Copies"]
WORDS = ["Dune", "Empire", "Night", "River", "Garden", "Stone", "Winter", "Glass", "Letters",
         "Shadow", "Ocean", "Machine", "Silence", "Fire", "Mountain", "Cities", "Year", "Light"]
SHELVES = ["scifi", "fantasy", "history", "favorites", "book-club", "classics", "poetry"]


def row(index, rng):
    title = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))
    if index % 7 == 0:
        title += ", Vol. %d" % (index % 5 + 1)
    if index % 11 == 0:
        title = 'The "%s" Affair' % title
    author = "%s %s" % (rng.choice(["Ann", "Bo", "Chen", "Dara", "Émile", "Farah"]),
                        rng.choice(["Lee", "Okafor", "Novak", "García", "Smith"]))
    isbn = "%010d" % rng.randint(0, 999999999)
    shelf = rng.choice(["read", "to-read", "currently-reading"])
    shelves = ", ".join(rng.sample(SHELVES, rng.randint(0, 3)))
    review = 'Loved it, "really".\nSecond line, with a comma.' if index % 5 == 0 else ""
    return [str(100000 + index), "%s #%d" % (title, index), author, author, "", '="%s"' % isbn,
            '="978%s"' % isbn[:9] if index % 3 else '=""', str(rng.randint(0, 5)),
            "%.2f" % rng.uniform(2, 5), "Press %d" % (index % 40), "Paperback", str(rng.randint(90, 900)),
            str(rng.randint(1950, 2025)), str(rng.randint(1800, 2025)),
            "2024/%02d/%02d" % (rng.randint(1, 12), rng.randint(1, 28)) if shelf == "read" else "",
            "2023/%02d/%02d" % (rng.randint(1, 12), rng.randint(1, 28)), shelves, shelves, shelf, review,
            "", "", str(rng.randint(0, 2)), "0"]


def main():
    count, path = int(sys.argv[1]), sys.argv[2]
    rng = random.Random(42)
    with open(path, "w", newline="", encoding="utf-8-sig") as out:
        writer = csv.writer(out, lineterminator="\r\n")
        writer.writerow(HEADER)
        for index in range(count):
            writer.writerow(row(index, rng))


if __name__ == "__main__":
    main()
