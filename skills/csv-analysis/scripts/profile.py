"""Profile a CSV file with the standard library: types, missing values and ranges per column.

Usage: python profile.py data.csv
"""

import csv
import statistics
import sys


def profile(path: str) -> None:
    with open(path, newline='', encoding='utf-8-sig') as stream:
        rows = list(csv.DictReader(stream))
    print(f'{len(rows)} rows')
    for column in rows[0].keys() if rows else []:
        values = [row[column] for row in rows]
        present = [value for value in values if value.strip()]
        numbers = []
        for value in present:
            try:
                numbers.append(float(value.replace(',', '')))
            except ValueError:
                break
        else:
            if numbers:
                print(
                    f'{column}: numeric, {len(values) - len(present)} missing, '
                    f'min {min(numbers)}, median {statistics.median(numbers)}, max {max(numbers)}'
                )
                continue
        print(f'{column}: text, {len(values) - len(present)} missing, {len(set(present))} distinct')


if __name__ == '__main__':
    profile(sys.argv[1])
