// Shapes with areas, kept in a registry by name.
#pragma once

#include <memory>
#include <string>
#include <vector>

#define SHAPES_VERSION 2
#define SQUARE(x) ((x) * (x))

namespace geo {

enum class Unit { Millimetre, Metre };

struct Point {
    double x;
    double y;

    double dist(const Point& other) const;
};

class Shape {
public:
    explicit Shape(std::string name);

    virtual double area() const = 0;

    [[nodiscard]]
    const std::string& name() const { return name_; }

private:
    std::string name_;
};

class Circle : public Shape {
public:
    Circle(Point centre, double radius);
    double area() const override;

private:
    Point centre_;
    double radius_;
};

class Rect : public Shape {
public:
    Rect(Point min, Point max);
    double area() const override;

private:
    Point min_;
    Point max_;
};

template <typename T>
class Registry {
public:
    void add(std::shared_ptr<T> item) { items_.push_back(std::move(item)); }

    T* find(const std::string& name) const;

    std::size_t size() const { return items_.size(); }

private:
    std::vector<std::shared_ptr<T>> items_;
};

template <typename T>
T* Registry<T>::find(const std::string& name) const
{
    for (const auto& item : items_) {
        if (item->name() == name) {
            return item.get();
        }
    }
    return nullptr;
}

template <typename T>
T clamp_value(T value, T low, T high)
{
    return value < low ? low : (high < value ? high : value);
}

}  // namespace geo

double total_area(const geo::Registry<geo::Shape>& shapes);
geo::Unit parse_unit(const std::string& text);
